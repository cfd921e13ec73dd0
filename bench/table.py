"""The issue-12 table in one command: atomic-host against the interpreter floor and the upstream agent.

    python bench/table.py [--runs N] [--no-upstream] [--pi-dir DIR] [--turns 2000] [--bash-mb 20]
                          [--settle-ms 50] [--samples] [--plain]

Prints a markdown table (figure | upstream | atomic-host | ratio | goal | met?) and footnotes.
Every figure is the median of ``--runs`` (default 7) client-measured timings, after untimed
warm-ups, in the same run on the same machine:

- spawn → first ``get_state`` response: spawn the agent, write one ``get_state`` line, read one
  stdout line. The interpreter floor is ``python -c "import asyncio"`` from the same venv spawned
  the same way (its "line" is EOF). The three commands take turns, round-robin.
- prompt → ``agent_end`` / first ``text_delta`` for a 200-delta reply: both agents use the same
  scripted OpenAI-chat SSE server (tests/providers/http/sse_server.py serving the reply of
  bench/agent_run.py) in a process of its own, configured as provider ``local``, model ``m1`` in
  each agent's models.json; ``--no-session``, ``new_session`` between runs.
- 2,000-turn session: each agent gets the same conversation in its own session file (atomic-host
  through its own store; upstream as the JSONL its docs/session-format.md describes), starts on a
  2-turn session and is timed on ``switch_session`` to the long one (alternating with the short
  one, so every switch loads), then on each read command with the long session open.
- direct ``bash`` printing ``--bash-mb`` MB: time to the response, and the bytes the client got
  (``bash_execution_update`` deltas and the response's ``output``).
- peak memory: VmHWM of the agent's own process (atomic-host: the Python process; upstream: node),
  the largest over the processes of the three phases above.

Times end when the complete response (or event) line has arrived, before the client parses it.
Both agents run side by side, one process each per phase, and every round visits both in turn
(rotating the order) after a 50 ms pause, so both see the same machine load. On a shared machine
the medians move with the load: the header prints the load average, the notes the best run of
each figure, ``--samples`` every timing; raise ``--runs`` when the machine is busy.

``--plain`` runs atomic-host with ``ATOMIC_PLAIN=1``: every speed tactic off (docs/performance.md),
for what they buy; compare its ratios to upstream with a run without it, the machine load moves both.

The upstream yardstick is ``@mariozechner/pi-coding-agent@0.73.1``, installed with npm into a
temporary dir (or ``--pi-dir``, kept for the next run) and run as ``pi --mode rpc`` with
``PI_CODING_AGENT_DIR`` pointing at a temporary agent dir, ``PI_OFFLINE=1`` and ``HOME`` in the
temporary tree. It is a yardstick, never a dependency of the project.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

import agent_run  # noqa: E402  (the 200-delta reply and the scripted SSE server module)
import sessions_store  # noqa: E402  (the messages of the long session)
from bash_stream import vm_hwm_kib  # noqa: E402

from atomic_host.client import RpcClient  # noqa: E402
from atomic_host.kit.sessions.store import default_session_dir  # noqa: E402
from builtin_plugins.stores import open_builtin_store as open_store  # noqa: E402

PI_PACKAGE = "@mariozechner/pi-coding-agent"
PI_VERSION = "0.73.1"
ATOMIC, UPSTREAM, FLOOR = "atomic-host", "upstream", "floor"
GET_STATE = b'{"type":"get_state","id":"s"}\n'
MODEL = ("local", "m1")
DELTAS = agent_run.DELTAS
SETTLE_S = 0.05
"""Pause before each timed step (``--settle-ms``): neither agent's leftover work lands in the other's
time, and requests come paced like a client's, not back to back (both agents answer small requests
faster back to back, when their caches are hot)."""
READS = ("get_messages", "get_state", "get_session_stats", "get_fork_messages", "get_tree", "get_entries")


@dataclass
class Results:
    samples: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    """figure key → agent → timings (ms)."""
    unsupported: dict[str, str] = field(default_factory=dict)
    """Read commands upstream refused → its error."""
    failures: list[str] = field(default_factory=list)
    bash_bytes: dict[str, tuple[int, int]] = field(default_factory=dict)
    """agent → (fewest delta bytes in a run, response output bytes)."""
    peak_kib: dict[str, dict[str, int]] = field(default_factory=dict)
    """agent → phase → VmHWM."""
    session_bytes: dict[str, int] = field(default_factory=dict)

    def add(self, key: str, agent: str, ms: float) -> None:
        self.samples.setdefault(key, {}).setdefault(agent, []).append(ms)

    def median(self, key: str, agent: str) -> float | None:
        values = self.samples.get(key, {}).get(agent)
        return statistics.median(values) if values else None


# -- the scripted LLM server (a process of its own) ------------------------------------------------


class _Forever:
    """A reply queue that never runs dry: every request gets the same 200-delta reply."""

    def __init__(self, reply: Any) -> None:
        self.reply = reply

    def __bool__(self) -> bool:
        return True

    def popleft(self) -> Any:
        return self.reply

    def append(self, _reply: Any) -> None:
        pass


class _Discard(list):
    def append(self, _item: Any) -> None:
        pass


def serve() -> None:
    sse = agent_run.sse
    with sse.SSEServer() as server:
        server.replies = _Forever(sse.Reply(chunks=agent_run.reply()))  # type: ignore[assignment]
        server.requests = _Discard()  # keep no request bodies
        print(server.base_url, flush=True)
        sys.stdin.read()  # until the bench closes our stdin


class Server:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert self.proc.stdout is not None
        self.base_url = self.proc.stdout.readline().decode().strip()
        if not self.base_url.startswith("http"):
            raise RuntimeError("the SSE server did not start")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(10)


# -- the two agents ---------------------------------------------------------------------------------


@dataclass
class Agent:
    name: str
    command: list[str]
    dir_var: str
    """The env var naming the agent dir."""
    extra_env: dict[str, str] = field(default_factory=dict)

    def sandbox(self, root: Path, base_url: str) -> tuple[dict[str, str], Path]:
        """A fresh agent dir (models.json with the local model), home, tmp and cwd under ``root``."""
        for sub in ("home", "agent", "work", "tmp"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        provider, model = MODEL
        providers = {
            provider: {"baseUrl": base_url, "api": "openai-completions", "apiKey": "dummy", "models": [{"id": model}]}
        }
        (root / "agent" / "models.json").write_text(json.dumps({"providers": providers}))
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ATOMIC_", "PI_")) and not k.endswith(("_API_KEY", "_TOKEN"))
        }
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed host has its bytecode compiled
        env.update(HOME=str(root / "home"), TMPDIR=str(root / "tmp"), **self.extra_env)
        env[self.dir_var] = str(root / "agent")
        return env, (root / "work").resolve()


def atomic_agent(plain: bool = False) -> Agent:
    """atomic-host's RPC command; ``plain``: with ``ATOMIC_PLAIN=1`` (no speed tactic, docs/performance.md)."""
    script = Path(sys.executable).parent / "atomic"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "atomic_host"]
    return Agent(ATOMIC, [*command, "--mode", "rpc"], "ATOMIC_CODING_AGENT_DIR", {"ATOMIC_PLAIN": "1"} if plain else {})


def pi_agent(bin_path: Path) -> Agent:
    return Agent(UPSTREAM, [str(bin_path), "--mode", "rpc"], "PI_CODING_AGENT_DIR", {"PI_OFFLINE": "1"})


def install_pi(prefix: Path) -> Path:
    """``npm install --prefix <prefix> @mariozechner/pi-coding-agent@0.73.1`` unless it is there."""
    bin_path = prefix / "node_modules" / ".bin" / "pi"
    package = prefix / "node_modules" / PI_PACKAGE / "package.json"
    if bin_path.exists() and package.exists() and json.loads(package.read_text())["version"] == PI_VERSION:
        return bin_path
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm not found")
    prefix.mkdir(parents=True, exist_ok=True)
    print(f"installing {PI_PACKAGE}@{PI_VERSION} into {prefix} ...", file=sys.stderr, flush=True)
    flags = ["--no-audit", "--no-fund", "--loglevel=error"]
    spec = f"{PI_PACKAGE}@{PI_VERSION}"
    subprocess.run([npm, "install", "--prefix", str(prefix), *flags, spec], check=True, stdout=subprocess.DEVNULL)
    if not bin_path.exists():
        raise RuntimeError(f"npm install left no {bin_path}")
    return bin_path


class TimedClient(RpcClient):
    """An RpcClient that notes when each complete stdout line arrived, before parsing it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.line_at = 0.0
        self.arrived: dict[str, float] = {}
        self.types: dict[str, str] = {}
        """Pending request id → command type."""

    def _dispatch(self, line: str) -> None:
        self.line_at = time.perf_counter()
        n = len(self.responses)
        super()._dispatch(line)
        if len(self.responses) > n:
            response = self.responses[-1]
            self.responses.clear()
            rid = response.get("id")
            if rid is None:
                # pi answers an unknown command without its id: it belongs to the oldest pending
                # request of that type.
                rid = next((i for i, t in self.types.items() if t == response.get("command")), None)
                fut = self._pending.pop(rid, None) if rid is not None else None
                if fut is not None and not fut.done():
                    fut.set_result(response)
            self.arrived[str(rid)] = self.line_at
            self.types.pop(str(rid), None)

    async def timed(self, command: dict[str, Any], timeout: float = 120) -> tuple[float, dict[str, Any]]:
        """(ms to the complete response line, the response)."""
        command = {**command, "id": command.get("id", f"t{time.perf_counter_ns()}")}
        self.types[str(command["id"])] = command["type"]
        start = time.perf_counter()
        response = await self.request(command, timeout)
        return (self.arrived.pop(str(command["id"])) - start) * 1000, response

    async def ok(self, command: dict[str, Any], timeout: float = 120) -> tuple[float, dict[str, Any]]:
        elapsed, response = await self.timed(command, timeout)
        if not response.get("success"):
            raise RuntimeError(f"{command['type']}: {response.get('error')}")
        return elapsed, response


async def open_client(agent: Agent, args: list[str], env: dict[str, str], cwd: Path, log: Path) -> TimedClient:
    with log.open("ab") as err:
        client = TimedClient(args, command=agent.command, cwd=str(cwd), env=env, stderr=err.fileno())
        await client.start()
    return client


# -- startup ----------------------------------------------------------------------------------------


def first_line_ms(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, bytes]:
    """Spawn, write one get_state line, read one stdout line: (ms, the line)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd
    )
    assert proc.stdin and proc.stdout
    try:
        proc.stdin.write(GET_STATE)
        proc.stdin.flush()
    except BrokenPipeError:
        pass  # the floor exits without reading
    line = proc.stdout.readline()
    elapsed = (time.perf_counter() - start) * 1000
    try:
        proc.stdin.close()
    except BrokenPipeError:
        pass
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return elapsed, line


def bench_startup(agents: list[Agent], base_url: str, tmp: Path, runs: int, res: Results) -> None:
    setups: list[tuple[str, list[str], dict[str, str], Path]] = []
    for agent in agents:
        env, cwd = agent.sandbox(tmp / "startup" / agent.name, base_url)
        setups.append((agent.name, [*agent.command, "--model", "/".join(MODEL)], env, cwd))
    env, cwd = atomic_agent().sandbox(tmp / "startup" / FLOOR, base_url)
    setups.append((FLOOR, [sys.executable, "-c", "import asyncio"], env, cwd))
    broken: set[str] = set()
    for i in range(runs + 1):  # round 0 warms the bytecode and page caches
        k = i % len(setups)
        for name, command, env, cwd in setups[k:] + setups[:k]:
            if name in broken:
                continue
            elapsed, line = first_line_ms(command, env, cwd)
            if name != FLOOR and b'"success":true' not in line.replace(b" ", b""):
                if name == ATOMIC:
                    raise RuntimeError(f"{name}: unexpected first line {line[:300]!r}")
                res.failures.append(f"{name} startup could not be measured: first line {line[:200]!r}")
                broken.add(name)
            elif i:
                res.add("startup", name, elapsed)


# -- the agents side by side ------------------------------------------------------------------------


class Fleet:
    """One agent process per agent for a phase; each round visits every agent in turn (rotating
    the order), so both are measured under the same machine load. An upstream failure drops
    upstream from the phase (its figures become —); an atomic-host failure ends the bench."""

    def __init__(self, phase: str, res: Results) -> None:
        self.phase, self.res = phase, res
        self.members: dict[str, tuple[Agent, TimedClient, Any]] = {}

    def _failed(self, agent: Agent, exc: Exception) -> None:
        if agent.name == ATOMIC:
            raise exc
        self.res.failures.append(f"{agent.name} {self.phase} could not be measured (—): {type(exc).__name__}: {exc}")
        self.members.pop(agent.name, None)

    async def open(self, agent: Agent, root: Path, base_url: str, args: list[str], prepare: Any = None) -> None:
        """Start ``agent`` in a fresh sandbox; ``prepare(agent, root, cwd)`` returns (extra args, state)."""
        try:
            env, cwd = agent.sandbox(root, base_url)
            state = None
            if prepare is not None:
                extra, state = prepare(agent, root, cwd)
                args = [*args, *extra]
            client = await open_client(agent, args, env, cwd, root / "stderr.log")
            self.members[agent.name] = (agent, client, state)
            await client.ok({"type": "get_state"}, timeout=60)
        except Exception as exc:
            self._failed(agent, exc)

    async def rounds(self, n: int, step: Any) -> None:
        """``await step(agent, client, state, i)`` for i in range(n), every agent each round."""
        for i in range(n):
            members = list(self.members.values())
            k = i % len(members) if members else 0
            for agent, client, state in members[k:] + members[:k]:
                await asyncio.sleep(SETTLE_S)  # whatever the previous step left running ends first
                try:
                    await step(agent, client, state, i)
                except Exception as exc:
                    self._failed(agent, exc)

    async def close(self) -> None:
        for agent, client, _ in self.members.values():
            assert client.proc is not None
            try:
                self.res.peak_kib.setdefault(agent.name, {})[self.phase] = vm_hwm_kib(client.proc.pid)
            except OSError:  # it already exited
                pass
            await client.close()


# -- prompt → agent_end -----------------------------------------------------------------------------


async def bench_run(agents: list[Agent], base_url: str, tmp: Path, runs: int, res: Results) -> None:
    fleet = Fleet("prompt runs", res)

    async def step(agent: Agent, client: TimedClient, _state: Any, i: int) -> None:
        marks: dict[str, float] = {"deltas": 0}

        def on_event(event: dict[str, Any]) -> None:
            kind = event.get("type")
            if kind == "message_update" and event["assistantMessageEvent"].get("type") == "text_delta":
                marks["deltas"] += 1
                marks.setdefault("first", client.line_at)
            elif kind == "agent_end":
                marks.setdefault("end", client.line_at)

        off = client.on_event(on_event)
        n0 = len(client.events)
        start = time.perf_counter()
        try:
            await client.ok({"type": "prompt", "message": f"run {i}"})
            end = await client.wait_for_event("agent_end", after=n0, timeout=60)
        finally:
            off()
        last = end["messages"][-1]
        if last.get("stopReason") != "stop" or marks["deltas"] != DELTAS:
            raise RuntimeError(
                f"run {i}: {marks['deltas']:.0f} deltas, stopReason {last.get('stopReason')}: "
                f"{last.get('errorMessage')}"
            )
        await client.ok({"type": "new_session"})
        client.events.clear()
        client.lines.clear()
        if i >= 2:  # two warm-up runs (imports, JIT, connection pool)
            res.add("first_delta", agent.name, (marks["first"] - start) * 1000)
            res.add("agent_end", agent.name, (marks["end"] - start) * 1000)

    try:
        for agent in agents:
            await fleet.open(agent, tmp / "run" / agent.name, base_url, ["--model", "/".join(MODEL), "--no-session"])
        await fleet.rounds(runs + 2, step)
    finally:
        await fleet.close()


# -- the 2,000-turn session --------------------------------------------------------------------------


def _messages(turns: int) -> list[dict[str, Any]]:
    """bench/sessions_store.py's conversation (200-char questions, 600-char answers), by the local model."""
    provider, model = MODEL
    out = []
    for i in range(turns):
        out.append(sessions_store._user(2 * i))
        answer = sessions_store._assistant(2 * i)
        out.append({**answer, "api": "openai-completions", "provider": provider, "model": model})
    return out


def atomic_sessions(agent_dir: Path, cwd: Path, turns: int) -> tuple[str, str]:
    """A 2-turn and a ``turns``-turn session written by atomic-host's own store: their ids."""
    store = open_store("jsonl", agent_dir, None, str(cwd), fsync="never")
    ids = []
    for n in (2, turns):
        session = store.new_session(str(cwd))
        session.append_model_change(*MODEL)
        session.append_thinking_level_change("off")
        for message in _messages(n):
            session.append_message(message)
        ids.append(session.id)
        session.close()
    store.close()
    return ids[0], ids[1]


def _iso(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def pi_session_file(directory: Path, cwd: Path, turns: int) -> Path:
    """A session in pi's JSONL format (docs/session-format.md of the package): a version-3 header,
    then entries chained by ``parentId`` with 8-hex-char ids."""
    base = int(time.time() * 1000) - 10_000_000
    session_id = str(uuid.uuid4())
    header = {"type": "session", "version": 3, "id": session_id, "timestamp": _iso(base), "cwd": str(cwd)}
    provider, model = MODEL
    bodies: list[dict[str, Any]] = [
        {"type": "model_change", "provider": provider, "modelId": model},
        {"type": "thinking_level_change", "thinkingLevel": "off"},
        *({"type": "message", "message": m} for m in _messages(turns)),
    ]
    lines, parent, used = [json.dumps(header)], None, set()
    for n, body in enumerate(bodies):
        entry_id = secrets.token_hex(4)
        while entry_id in used:
            entry_id = secrets.token_hex(4)
        used.add(entry_id)
        entry = {"type": body["type"], "id": entry_id, "parentId": parent, "timestamp": _iso(base + n), **body}
        lines.append(json.dumps(entry))
        parent = entry_id
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{_iso(base).replace(':', '-').replace('.', '-')}_{session_id}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def session_files(turns: int) -> Callable[[Agent, Path, Path], tuple[list[str], Any]]:
    """Write each agent's short and long session; (``--session`` args, (short, long) switch fields)."""

    def prepare(agent: Agent, root: Path, cwd: Path) -> tuple[list[str], Any]:
        directory = default_session_dir(root / "agent", str(cwd))
        if agent.name == UPSTREAM:
            short, long = pi_session_file(directory, cwd, 2), pi_session_file(directory, cwd, turns)
            start, refs = str(short), ({"sessionPath": str(short)}, {"sessionPath": str(long)})
        else:
            short_id, long_id = atomic_sessions(root / "agent", cwd, turns)
            start, refs = short_id, ({"sessionId": short_id}, {"sessionId": long_id})
        res_bytes = max(p.stat().st_size for p in directory.glob("*.jsonl"))
        return ["--session", start], (refs, res_bytes)

    return prepare


async def bench_sessions(agents: list[Agent], base_url: str, tmp: Path, turns: int, runs: int, res: Results) -> None:
    fleet = Fleet("session", res)

    async def switch(agent: Agent, client: TimedClient, state: Any, i: int) -> None:
        (short, long), _ = state
        elapsed, _ = await client.ok({"type": "switch_session", **long})
        first, _ = await client.ok({"type": "get_state"})
        await client.ok({"type": "switch_session", **short})
        if i:  # round 0 is a warm-up
            res.add("switch_session", agent.name, elapsed)
            res.add("first_get_state", agent.name, first)

    async def open_long(agent: Agent, client: TimedClient, state: Any, _i: int) -> None:
        (_, long), size = state
        res.session_bytes[agent.name] = size
        await client.ok({"type": "switch_session", **long})
        _, response = await client.ok({"type": "get_messages"})
        if (count := len(response["data"]["messages"])) != 2 * turns:
            raise RuntimeError(f"the long session has {count} messages, not {2 * turns}")

    def read(command: str) -> Any:
        async def step(agent: Agent, client: TimedClient, _state: Any, i: int) -> None:
            if agent.name == UPSTREAM and command in res.unsupported:
                return
            elapsed, response = await client.timed({"type": command})
            client.lines.clear()
            if not response.get("success"):
                if agent.name == ATOMIC or i:
                    raise RuntimeError(f"{command}: {response.get('error')}")
                res.unsupported[command] = str(response.get("error"))  # upstream lacks the command
            elif i:  # round 0 is a warm-up
                res.add(command, agent.name, elapsed)

        return step

    try:
        for agent in agents:
            args = ["--model", "/".join(MODEL)]
            await fleet.open(agent, tmp / "ses" / agent.name, base_url, args, session_files(turns))
        await fleet.rounds(runs + 1, switch)
        await fleet.rounds(1, open_long)
        for command in READS:
            await fleet.rounds(runs + 1, read(command))
    finally:
        await fleet.close()


# -- direct bash ------------------------------------------------------------------------------------


async def bench_bash(agents: list[Agent], base_url: str, tmp: Path, size: int, runs: int, res: Results) -> None:
    fleet = Fleet("bash", res)
    command = f"yes 'the quick brown fox jumps over the lazy dog' | head -c {size}"
    counts: dict[str, tuple[list[int], list[int]]] = {}

    async def step(agent: Agent, client: TimedClient, _state: Any, i: int) -> None:
        if i == 0:  # warm-up
            await client.ok({"type": "bash", "command": "echo warm", "id": "warm"})
            return
        counted = [0]
        rid = f"bench-{i}"

        def on_event(event: dict[str, Any]) -> None:
            if event.get("type") == "bash_execution_update" and event.get("id") == rid:
                counted[0] += len(event["delta"].encode())

        off = client.on_event(on_event)
        try:
            elapsed, response = await client.ok({"type": "bash", "command": command, "id": rid}, timeout=600)
        finally:
            off()
        data = response["data"]
        if data.get("exitCode") != 0:
            raise RuntimeError(f"bash exit code {data.get('exitCode')}")
        res.add("bash", agent.name, elapsed)
        deltas, outputs = counts.setdefault(agent.name, ([], []))
        deltas.append(counted[0])
        outputs.append(len(data.get("output", "").encode()))
        client.events.clear()  # the client keeps nothing across runs
        client.lines.clear()

    try:
        for agent in agents:
            await fleet.open(agent, tmp / "bash" / agent.name, base_url, ["--model", "/".join(MODEL), "--no-session"])
        await fleet.rounds(runs + 1, step)
    finally:
        await fleet.close()
    for name, (deltas, outputs) in counts.items():
        res.bash_bytes[name] = (min(deltas), int(statistics.median(outputs)))


# -- the table --------------------------------------------------------------------------------------


def fmt_ms(ms: float | None) -> str:
    if ms is None:
        return "—"
    if ms >= 100:
        return f"{ms:,.0f} ms"
    if ms >= 10:
        return f"{ms:.1f} ms"
    return f"{ms:.2f} ms"


def fmt_bytes(n: float) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f} MB"
    if n >= 1000:
        return f"{n / 1000:.0f} KB"
    return f"{n:.0f} B"


def judged(ours: float | None, ref: float | None, ok: Callable[[float], bool], unit: str = "×") -> tuple[str, str]:
    """(ratio cell, met cell) for a goal on ours / ref."""
    if ours is None or ref is None or ref <= 0:
        return "—", "—"
    ratio = ours / ref
    return f"{ratio:.2f}{unit}", "yes" if ok(ratio) else "**no**"


def rows(res: Results, ns: argparse.Namespace) -> list[tuple[str, str, str, str, str, str]]:
    out = []

    def timed_row(figure: str, key: str, goal: str, ok: Callable[[float], bool], ref: str = UPSTREAM) -> None:
        ours, theirs = res.median(key, ATOMIC), res.median(key, ref)
        ratio, met = judged(ours, theirs, ok, "× floor" if ref == FLOOR else "×")
        shown = f"floor {fmt_ms(theirs)}" if ref == FLOOR else fmt_ms(theirs)
        out.append((figure, shown, fmt_ms(ours), ratio, goal, met))

    spawn = "spawn → first `get_state` response"
    timed_row(f"{spawn}, vs the interpreter floor", "startup", "≤ 1.3× the floor", lambda r: r <= 1.3, FLOOR)
    timed_row(f"{spawn}, vs upstream", "startup", "ahead of upstream", lambda r: r < 1)
    timed_row(f"prompt → `agent_end`, {DELTAS} deltas", "agent_end", "≥ 2× faster than upstream", lambda r: r <= 0.5)
    timed_row("prompt → first `text_delta`", "first_delta", "≥ 1.5× faster", lambda r: r <= 1 / 1.5)
    session = f"{ns.turns:,}-turn session"
    for command in ("get_messages", "get_state", "get_session_stats", "get_fork_messages"):
        timed_row(f"{session}: `{command}`", command, "≤ upstream", lambda r: r <= 1)
    timed_row(f"{session}: `switch_session`", "switch_session", "≥ 2× faster", lambda r: r <= 0.5)
    for command, limit in (("get_tree", 50.0), ("get_entries", 10.0)):
        ours, theirs = res.median(command, ATOMIC), res.median(command, UPSTREAM)
        ratio, _ = judged(ours, theirs, lambda r: True)
        met = "—" if ours is None else "yes" if ours <= limit else "**no**"
        out.append((f"{session}: `{command}`", fmt_ms(theirs), fmt_ms(ours), ratio, f"≤ {limit:g} ms", met))

    size = ns.bash_mb * 1_000_000

    def bash_cell(agent: str) -> str:
        ms = res.median("bash", agent)
        if ms is None:
            return "—"
        delta_bytes, output_bytes = res.bash_bytes[agent]
        if delta_bytes == size:
            got = "every byte as deltas"
        elif delta_bytes:
            got = f"{fmt_bytes(delta_bytes)} as deltas"
        else:
            got = f"{fmt_bytes(output_bytes)} of it, in the response"
        return f"{fmt_ms(ms)} ({got})"

    ratio, met = judged(res.median("bash", ATOMIC), res.median("bash", UPSTREAM), lambda r: r < 1)
    if ATOMIC in res.bash_bytes and res.bash_bytes[ATOMIC][0] != size:
        met = "**no**"
    goal = "keep: ahead of upstream, every byte as deltas"
    out.append((f"{ns.bash_mb} MB direct `bash` → response", bash_cell(UPSTREAM), bash_cell(ATOMIC), ratio, goal, met))

    def peak(agent: str) -> float | None:
        phases = res.peak_kib.get(agent)
        return max(phases.values()) / 1024 if phases else None

    ours, theirs = peak(ATOMIC), peak(UPSTREAM)
    ratio, met = judged(ours, theirs, lambda r: r <= 0.25)
    cells = [f"{v:.0f} MiB" if v is not None else "—" for v in (theirs, ours)]
    out.append(("peak memory (VmHWM of the agent process)", *cells, ratio, "keep ≤ 1/4 of upstream", met))
    return out


def report(res: Results, ns: argparse.Namespace, agents: list[Agent], upstream_note: str) -> None:
    now = datetime.datetime.now().astimezone()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    plain = "atomic-host with ATOMIC_PLAIN=1. " if ns.plain else ""
    print(
        f"{plain}Medians of {ns.runs}, {now:%Y-%m-%d %H:%M %Z}, {os.cpu_count()} cores (load average {load}); "
        f"Python {platform.python_version()}, node {_node_version()}; upstream: {upstream_note}."
    )
    print()
    print("| figure | upstream | atomic-host | ratio | goal | met? |")
    print("|---|---|---|---|---|---|")
    for row in rows(res, ns):
        print("| " + " | ".join(row) + " |")
    print()
    print("ratio = atomic-host / reference (the floor in the first row, upstream elsewhere); < 1 is faster or smaller.")
    ours = next(a for a in agents if a.name == ATOMIC)
    print(
        f'- floor: `python -c "import asyncio"` with {sys.executable}, spawned the same way (write a get_state '
        f"line, read to the first line or EOF); atomic-host spawned as `{' '.join(ours.command)} --model local/m1`."
    )
    if ATOMIC in res.session_bytes:
        firsts = ", ".join(
            f"{a} {fmt_ms(res.median('first_get_state', a))}" for a in (ATOMIC, UPSTREAM) if a in res.session_bytes
        )
        sizes = ", ".join(f"{a} {fmt_bytes(n)}" for a, n in res.session_bytes.items())
        print(
            f"- {ns.turns:,}-turn session: {2 * ns.turns:,} messages; session file {sizes}. "
            f"The first `get_state` right after each `switch_session`: {firsts}."
        )
    for command, error in res.unsupported.items():
        print(f"- upstream `{command}` is —: pi {PI_VERSION} has no such RPC command (it answers {error!r}).")
    if res.bash_bytes:
        parts = [
            f"{a} {d:,} B as `bash_execution_update` deltas and {o:,} B in the response `output`"
            for a, (d, o) in res.bash_bytes.items()
        ]
        print(f"- bash bytes delivered per run (of {ns.bash_mb * 1_000_000:,}): " + "; ".join(parts) + ".")
    for agent, phases in res.peak_kib.items():
        listed = ", ".join(f"{phase} {kib / 1024:.0f} MiB" for phase, kib in phases.items())
        print(f"- VmHWM of {agent} by phase: {listed}.")
    best = [
        f"{key} {'/'.join(fmt_ms(min(v[a])) if a in v else '—' for a in (UPSTREAM, ATOMIC))}"
        for key, v in res.samples.items()
        if key != "startup"
    ]
    starts = res.samples.get("startup", {})
    best.insert(
        0, "startup " + "/".join(fmt_ms(min(starts[a])) if a in starts else "—" for a in (FLOOR, UPSTREAM, ATOMIC))
    )
    print(f"- best run (floor/)upstream/atomic-host, for a loaded machine: {'; '.join(best)}.")
    for failure in res.failures:
        print(f"- {failure}")
    if ns.samples:
        print()
        for key, by_agent in res.samples.items():
            for agent, values in by_agent.items():
                print(f"- samples {key} {agent}: " + ", ".join(f"{v:.2f}" for v in values))


def _node_version() -> str:
    node = shutil.which("node")
    if node is None:
        return "absent"
    try:
        return subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


async def measure(ns: argparse.Namespace) -> None:
    res = Results()
    tmp = Path(tempfile.mkdtemp(prefix="atomic-table-"))
    server = Server()
    agents = [atomic_agent(ns.plain)]
    upstream_note = "not run (--no-upstream)"
    try:
        if not ns.no_upstream:
            try:
                agents.append(pi_agent(install_pi(Path(ns.pi_dir) if ns.pi_dir else tmp / "pi")))
                upstream_note = f"{PI_PACKAGE}@{PI_VERSION}, `pi --mode rpc`"
            except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
                upstream_note = "not installed"
                res.failures.append(f"upstream not installed, its column is —: {exc}")

        start = time.perf_counter()
        bench_startup(agents, server.base_url, tmp, ns.runs, res)
        print(f"startup: {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
        url, runs = server.base_url, ns.runs
        phases = [
            ("prompt runs", partial(bench_run, agents, url, tmp, runs, res)),
            ("session", partial(bench_sessions, agents, url, tmp, ns.turns, runs, res)),
            ("bash", partial(bench_bash, agents, url, tmp, ns.bash_mb * 1_000_000, runs, res)),
        ]
        for phase, run_phase in phases:
            start = time.perf_counter()
            await run_phase()
            print(f"{phase}: {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    finally:
        server.close()
        shutil.rmtree(tmp, ignore_errors=True)
    report(res, ns, agents, upstream_note)


def main() -> None:
    global SETTLE_S
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs per figure; medians (default 7)")
    parser.add_argument("--no-upstream", action="store_true", help="skip the upstream agent (no npm install)")
    parser.add_argument("--pi-dir", help="npm prefix for the upstream agent, kept between runs (default: a temp dir)")
    parser.add_argument("--turns", type=int, default=2000, help="turns in the long session (default 2000)")
    parser.add_argument("--bash-mb", type=int, default=20, help="MB the direct bash command prints (default 20)")
    parser.add_argument("--samples", action="store_true", help="also print every timing")
    parser.add_argument("--plain", action="store_true", help="atomic-host with ATOMIC_PLAIN=1 (no speed tactics)")
    parser.add_argument("--settle-ms", type=float, default=SETTLE_S * 1000, help="pause before each step (50)")
    ns = parser.parse_args()
    SETTLE_S = ns.settle_ms / 1000
    asyncio.run(measure(ns))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        serve()
    else:
        main()
