"""The issue-12 table in one command: atomic-host against the interpreter floor and the upstream agent.

    python bench/table.py [--runs N] [--no-upstream] [--pi-dir DIR] [--turns 2000] [--bash-mb 20]

Prints a markdown table (figure | upstream | atomic-host | ratio | goal | met?) and footnotes.
Every figure is the median of ``--runs`` (default 7) client-measured round trips, after untimed
warm-ups, in the same run on the same machine:

- spawn → first ``get_state`` response: spawn the agent, write one ``get_state`` line, read one
  stdout line. The interpreter floor is ``python -c "import asyncio"`` from the same venv spawned
  the same way (its "line" is EOF). The three commands take turns, round-robin.
- prompt → ``agent_end`` / first ``text_delta`` for a 200-delta reply: both agents use the same
  scripted OpenAI-chat SSE server (tests/providers/sse_server.py, the reply of bench/agent_run.py)
  running in a process of its own, configured as provider ``local``, model ``m1`` in each agent's
  models.json; ``--no-session``, ``new_session`` between runs.
- 2,000-turn session: each agent gets the same conversation in its own session file (atomic-host
  through its store; upstream as the JSONL its docs/session-format.md describes), starts on a
  2-turn session and is timed on ``switch_session`` to the long one (alternating with the short
  one, so every switch loads), then on each read command with the long session open. Times are
  to the arrival of the complete response line (the client's own JSON parsing is not counted).
- direct ``bash`` printing ``--bash-mb`` MB: time to the response, and the bytes the client got
  (``bash_execution_update`` deltas and the response's ``output``).
- peak memory: VmHWM of the agent's process (atomic-host: the Python process; upstream: node),
  the largest over the processes of the three phases above.

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
from atomic_host.session.store.base import default_session_dir, open_store  # noqa: E402

PI_PACKAGE = "@mariozechner/pi-coding-agent"
PI_VERSION = "0.73.1"
GET_STATE = b'{"type":"get_state","id":"s"}\n'
MODEL = ("local", "m1")
DELTAS = agent_run.DELTAS
READS = ("get_messages", "get_state", "get_session_stats", "get_fork_messages", "get_tree", "get_entries")


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


def serve() -> None:
    sse = agent_run.sse
    with sse.SSEServer() as server:
        server.replies = _Forever(sse.Reply(chunks=agent_run.reply()))  # type: ignore[assignment]
        server.requests = _Discard()  # type: ignore[assignment]
        print(server.base_url, flush=True)
        sys.stdin.read()  # until the bench closes our stdin


class _Discard(list):
    def append(self, _item: Any) -> None:
        pass


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
    peak_kib: dict[str, int] = field(default_factory=dict)
    """VmHWM per phase."""

    def sandbox(self, root: Path, base_url: str) -> tuple[dict[str, str], Path]:
        """A fresh agent dir (with the local model), home and cwd under ``root``: (env, cwd)."""
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

    @property
    def is_upstream(self) -> bool:
        return self.name == "upstream"


def atomic_agent() -> Agent:
    script = Path(sys.executable).parent / "atomic"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "atomic_host"]
    return Agent("atomic-host", [*command, "--mode", "rpc"], "ATOMIC_CODING_AGENT_DIR")


def pi_agent(bin_path: Path) -> Agent:
    return Agent("upstream", [str(bin_path), "--mode", "rpc"], "PI_CODING_AGENT_DIR", {"PI_OFFLINE": "1"})


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
    subprocess.run(
        [
            npm,
            "install",
            "--prefix",
            str(prefix),
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            f"{PI_PACKAGE}@{PI_VERSION}",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
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
                # pi answers an unknown command without its id: give it to the oldest pending
                # request of that type.
                rid = next((i for i, t in self.types.items() if t == response.get("command")), None)
                fut = self._pending.pop(rid, None) if rid is not None else None
                if fut is not None and not fut.done():
                    fut.set_result(response)
            self.arrived[str(rid)] = self.line_at
            self.types.pop(str(rid), None)

    async def timed(self, command: dict[str, Any], timeout: float = 120) -> tuple[float, dict[str, Any]]:
        """(seconds to the complete response line, the response)."""
        rid = f"t{len(self.arrived)}-{time.perf_counter_ns()}"
        command = {**command, "id": command.get("id", rid)}
        self.types[str(command["id"])] = command["type"]
        start = time.perf_counter()
        response = await self.request(command, timeout)
        return self.arrived.pop(str(command["id"])) - start, response

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


async def close_client(agent: Agent, client: TimedClient, phase: str) -> None:
    assert client.proc is not None
    agent.peak_kib[phase] = vm_hwm_kib(client.proc.pid)
    await client.close()


# -- startup ----------------------------------------------------------------------------------------


def first_line_s(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, bytes]:
    """Spawn, write one get_state line, read one stdout line: (seconds, the line)."""
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
    elapsed = time.perf_counter() - start
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


def bench_startup(agents: list[Agent], base_url: str, tmp: Path, runs: int) -> dict[str, list[float]]:
    model = ["--model", "/".join(MODEL)]
    setups: list[tuple[str, list[str], dict[str, str], Path]] = []
    for agent in agents:
        env, cwd = agent.sandbox(tmp / "startup" / agent.name, base_url)
        setups.append((agent.name, [*agent.command, *model], env, cwd))
    floor_env, floor_cwd = atomic_agent().sandbox(tmp / "startup" / "floor", base_url)
    setups.append(("floor", [sys.executable, "-c", "import asyncio"], floor_env, floor_cwd))
    times: dict[str, list[float]] = {name: [] for name, *_ in setups}
    for i in range(runs + 1):  # round 0 warms the bytecode and page caches
        k = i % len(setups)
        for name, command, env, cwd in setups[k:] + setups[:k]:
            elapsed, line = first_line_s(command, env, cwd)
            if name != "floor" and b'"success":true' not in line.replace(b" ", b""):
                raise RuntimeError(f"{name}: unexpected first line {line[:300]!r}")
            if i:
                times[name].append(elapsed * 1000)
    return times


# -- prompt → agent_end -----------------------------------------------------------------------------


async def bench_run(agent: Agent, base_url: str, root: Path, runs: int) -> tuple[list[float], list[float]]:
    env, cwd = agent.sandbox(root, base_url)
    client = await open_client(agent, ["--model", "/".join(MODEL), "--no-session"], env, cwd, root / "stderr.log")
    firsts, ends = [], []
    try:
        await client.ok({"type": "get_state"})
        for i in range(runs + 2):  # two warm-up runs (imports, JIT, connection pool)
            marks: dict[str, float] = {"deltas": 0}

            def on_event(event: dict[str, Any], marks: dict[str, float] = marks) -> None:
                kind = event.get("type")
                if kind == "message_update" and event["assistantMessageEvent"].get("type") == "text_delta":
                    marks["deltas"] += 1
                    marks.setdefault("first", client.line_at)
                elif kind == "agent_end":
                    marks.setdefault("end", client.line_at)

            off = client.on_event(on_event)
            n0 = len(client.events)
            start = time.perf_counter()
            await client.ok({"type": "prompt", "message": f"run {i}"})
            end = await client.wait_for_event("agent_end", after=n0, timeout=60)
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
            if i >= 2:
                firsts.append((marks["first"] - start) * 1000)
                ends.append((marks["end"] - start) * 1000)
    finally:
        await close_client(agent, client, "prompt runs")
    return firsts, ends


# -- the 2,000-turn session --------------------------------------------------------------------------


def _messages(turns: int) -> list[dict[str, Any]]:
    out = []
    provider, model = MODEL
    for i in range(turns):
        out.append(sessions_store._user(2 * i))
        out.append(
            {**sessions_store._assistant(2 * i), "api": "openai-completions", "provider": provider, "model": model}
        )
    return out


def atomic_sessions(agent_dir: Path, cwd: Path, turns: int) -> tuple[str, str]:
    """Small and long session through atomic-host's own store: their ids."""
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
    """A session in pi's JSONL format (docs/session-format.md of the package): header, then entries
    chained by ``parentId``; ids are 8 hex chars."""
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


@dataclass
class SessionResult:
    ms: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    first_get_state: float = 0.0
    file_bytes: int = 0


async def bench_sessions(agent: Agent, base_url: str, root: Path, turns: int, runs: int) -> SessionResult:
    env, cwd = agent.sandbox(root, base_url)
    agent_dir = root / "agent"
    result = SessionResult()
    if agent.is_upstream:
        directory = default_session_dir(agent_dir, str(cwd))
        small_path, long_path = pi_session_file(directory, cwd, 2), pi_session_file(directory, cwd, turns)
        start_at, small, long = str(small_path), {"sessionPath": str(small_path)}, {"sessionPath": str(long_path)}
        result.file_bytes = long_path.stat().st_size
    else:
        small_id, long_id = atomic_sessions(agent_dir, cwd, turns)
        start_at, small, long = small_id, {"sessionId": small_id}, {"sessionId": long_id}
        result.file_bytes = max(p.stat().st_size for p in default_session_dir(agent_dir, str(cwd)).glob("*.jsonl"))
    args = ["--model", "/".join(MODEL), "--session", start_at]
    client = await open_client(agent, args, env, cwd, root / "stderr.log")
    try:
        await client.ok({"type": "get_state"})
        switches, firsts = [], []
        for i in range(runs + 1):  # round 0 is a warm-up
            elapsed, _ = await client.ok({"type": "switch_session", **long})
            first, _ = await client.ok({"type": "get_state"})
            await client.ok({"type": "switch_session", **small})
            if i:
                switches.append(elapsed * 1000)
                firsts.append(first * 1000)
        result.ms["switch_session"] = statistics.median(switches)
        result.first_get_state = statistics.median(firsts)
        await client.ok({"type": "switch_session", **long})
        _, response = await client.ok({"type": "get_messages"})
        count = len(response["data"]["messages"])
        if count != 2 * turns:
            raise RuntimeError(f"the long session has {count} messages, not {2 * turns}")
        for command in READS:
            elapsed, response = await client.timed({"type": command})
            if not response.get("success"):
                result.errors[command] = str(response.get("error"))
                continue
            times = [(await client.ok({"type": command}))[0] * 1000 for _ in range(runs)]
            result.ms[command] = statistics.median(times)
            client.lines.clear()
    finally:
        await close_client(agent, client, "session")
    return result


# -- direct bash ------------------------------------------------------------------------------------


@dataclass
class BashResult:
    ms: float
    delta_bytes: int
    output_bytes: int


async def bench_bash(agent: Agent, base_url: str, root: Path, size: int, runs: int) -> BashResult:
    env, cwd = agent.sandbox(root, base_url)
    command = f"yes 'the quick brown fox jumps over the lazy dog' | head -c {size}"
    client = await open_client(agent, ["--model", "/".join(MODEL), "--no-session"], env, cwd, root / "stderr.log")
    times, deltas, outputs = [], [], []
    try:
        await client.ok({"type": "get_state"})
        await client.ok({"type": "bash", "command": "echo warm", "id": "warm"})
        for run in range(runs):
            counted = 0
            rid = f"bench-{run}"

            def on_event(event: dict[str, Any], rid: str = rid) -> None:
                nonlocal counted
                if event.get("type") == "bash_execution_update" and event.get("id") == rid:
                    counted += len(event["delta"].encode())

            off = client.on_event(on_event)
            elapsed, response = await client.ok({"type": "bash", "command": command, "id": rid}, timeout=600)
            off()
            data = response["data"]
            if data.get("exitCode") != 0:
                raise RuntimeError(f"bash exit code {data.get('exitCode')}")
            times.append(elapsed * 1000)
            deltas.append(counted)
            outputs.append(len(data.get("output", "").encode()))
            client.events.clear()
            client.lines.clear()
    finally:
        await close_client(agent, client, "bash")
    return BashResult(statistics.median(times), min(deltas), statistics.median(outputs))


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


@dataclass
class Row:
    figure: str
    upstream: str
    atomic: str
    ratio: str
    goal: str
    met: str


def relative(ours: float | None, theirs: float | None, ok: Callable[[float], bool]) -> tuple[str, str]:
    """(ratio cell, met cell) for a goal on ours / theirs."""
    if ours is None or theirs is None or theirs <= 0:
        return "—", "—"
    ratio = ours / theirs
    return f"{ratio:.2f}×", "yes" if ok(ratio) else "**no**"


def absolute(ours: float | None, limit: float) -> str:
    if ours is None:
        return "—"
    return "yes" if ours <= limit else "**no**"


def median_or_none(values: list[float] | None) -> float | None:
    return statistics.median(values) if values else None


async def run_all(ns: argparse.Namespace) -> None:
    notes: list[str] = []
    tmp = Path(tempfile.mkdtemp(prefix="atomic-table-"))
    server = Server()
    agents = [atomic_agent()]
    pi_version = "not run (--no-upstream)"
    try:
        if not ns.no_upstream:
            try:
                prefix = Path(ns.pi_dir) if ns.pi_dir else tmp / "pi"
                agents.append(pi_agent(install_pi(prefix)))
                pi_version = f"{PI_PACKAGE}@{PI_VERSION}"
            except Exception as exc:
                pi_version = f"not installed ({exc})"
                notes.append(f"upstream not installed: {exc}")
        upstream = next((a for a in agents if a.is_upstream), None)
        ours = agents[0]
        failures: dict[tuple[str, str], str] = {}

        async def attempt(agent: Agent, phase: str, coro: Any) -> Any:
            print(f"  {agent.name}: {phase} ...", file=sys.stderr, flush=True)
            start = time.perf_counter()
            try:
                return await coro
            except Exception as exc:
                print(f"  {agent.name}: {phase} failed: {exc!r}", file=sys.stderr, flush=True)
                failures[(agent.name, phase)] = f"{type(exc).__name__}: {exc}"
                if not agent.is_upstream:
                    raise
                return None
            finally:
                print(f"  {agent.name}: {phase} {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)

        print("startup ...", file=sys.stderr, flush=True)
        try:
            startup = bench_startup(agents, server.base_url, tmp, ns.runs)
        except RuntimeError as exc:
            if upstream is None or "upstream" not in str(exc):
                raise
            failures[("upstream", "startup")] = str(exc)
            startup = bench_startup([ours], server.base_url, tmp, ns.runs)
        runs: dict[str, Any] = {}
        sessions: dict[str, Any] = {}
        bash: dict[str, Any] = {}
        for agent in agents:
            runs[agent.name] = await attempt(
                agent, "prompt runs", bench_run(agent, server.base_url, tmp / "run" / agent.name, ns.runs)
            )
            sessions[agent.name] = await attempt(
                agent,
                "session",
                bench_sessions(agent, server.base_url, tmp / "sessions" / agent.name, ns.turns, ns.runs),
            )
            bash[agent.name] = await attempt(
                agent,
                "bash",
                bench_bash(agent, server.base_url, tmp / "bash" / agent.name, ns.bash_mb * 1_000_000, ns.runs),
            )
    finally:
        server.close()
        shutil.rmtree(tmp, ignore_errors=True)

    rows: list[Row] = []
    up = upstream.name if upstream else None

    def get(d: dict[str, Any], name: str | None) -> Any:
        return d.get(name) if name else None

    floor = median_or_none(startup.get("floor"))
    a_start = median_or_none(startup.get(ours.name))
    u_start = median_or_none(startup.get(up)) if up else None
    ratio, met = relative(a_start, floor, lambda r: r <= 1.3)
    rows.append(
        Row(
            "spawn → first `get_state` response, vs the interpreter floor",
            f"floor {fmt_ms(floor)}",
            fmt_ms(a_start),
            ratio.replace("×", "× floor"),
            "≤ 1.3× the floor",
            met,
        )
    )
    ratio, met = relative(a_start, u_start, lambda r: r < 1)
    rows.append(
        Row(
            "spawn → first `get_state` response, vs upstream",
            fmt_ms(u_start),
            fmt_ms(a_start),
            ratio,
            "ahead of upstream",
            met,
        )
    )

    a_run, u_run = runs.get(ours.name), get(runs, up)
    a_first, a_end = (median_or_none(a_run[0]), median_or_none(a_run[1])) if a_run else (None, None)
    u_first, u_end = (median_or_none(u_run[0]), median_or_none(u_run[1])) if u_run else (None, None)
    ratio, met = relative(a_end, u_end, lambda r: r <= 0.5)
    rows.append(
        Row(
            f"prompt → `agent_end`, {DELTAS} deltas",
            fmt_ms(u_end),
            fmt_ms(a_end),
            ratio,
            "≥ 2× faster than upstream",
            met,
        )
    )
    ratio, met = relative(a_first, u_first, lambda r: r <= 1 / 1.5)
    rows.append(Row("prompt → first `text_delta`", fmt_ms(u_first), fmt_ms(a_first), ratio, "≥ 1.5× faster", met))

    a_ses: SessionResult | None = sessions.get(ours.name)
    u_ses: SessionResult | None = get(sessions, up)
    turns = f"{ns.turns:,}-turn session"
    goals: dict[str, tuple[str, Callable[[float], bool]]] = {
        "get_messages": ("≤ upstream", lambda r: r <= 1),
        "get_state": ("≤ upstream", lambda r: r <= 1),
        "get_session_stats": ("≤ upstream", lambda r: r <= 1),
        "get_fork_messages": ("≤ upstream", lambda r: r <= 1),
        "switch_session": ("≥ 2× faster", lambda r: r <= 0.5),
    }
    limits = {"get_tree": 50.0, "get_entries": 10.0}
    missing_upstream: dict[str, str] = {}
    for command in (
        "get_messages",
        "get_state",
        "get_session_stats",
        "get_fork_messages",
        "switch_session",
        "get_tree",
        "get_entries",
    ):
        a_ms = a_ses.ms.get(command) if a_ses else None
        u_ms = u_ses.ms.get(command) if u_ses else None
        if u_ses and command in u_ses.errors:
            missing_upstream[command] = u_ses.errors[command]
        if command in limits:
            limit = limits[command]
            ratio, _ = relative(a_ms, u_ms, lambda r: True)
            rows.append(
                Row(
                    f"{turns}: `{command}`", fmt_ms(u_ms), fmt_ms(a_ms), ratio, f"≤ {limit:g} ms", absolute(a_ms, limit)
                )
            )
        else:
            goal, ok = goals[command]
            ratio, met = relative(a_ms, u_ms, ok)
            rows.append(Row(f"{turns}: `{command}`", fmt_ms(u_ms), fmt_ms(a_ms), ratio, goal, met))

    a_bash: BashResult | None = bash.get(ours.name)
    u_bash: BashResult | None = get(bash, up)
    size = ns.bash_mb * 1_000_000

    def bash_cell(b: BashResult | None) -> str:
        if b is None:
            return "—"
        got = (
            "every byte as deltas"
            if b.delta_bytes == size
            else f"{fmt_bytes(b.delta_bytes)} as deltas"
            if b.delta_bytes
            else f"{fmt_bytes(b.output_bytes)} of it, in the response"
        )
        return f"{fmt_ms(b.ms)} ({got})"

    ratio, met = relative(a_bash.ms if a_bash else None, u_bash.ms if u_bash else None, lambda r: r < 1)
    if a_bash is not None and a_bash.delta_bytes != size:
        met = "**no**"
    rows.append(
        Row(
            f"{ns.bash_mb} MB direct `bash` → response",
            bash_cell(u_bash),
            bash_cell(a_bash),
            ratio,
            "keep: ahead of upstream, every byte as deltas",
            met,
        )
    )

    a_peak = max(ours.peak_kib.values()) / 1024 if ours.peak_kib else None
    u_peak = max(upstream.peak_kib.values()) / 1024 if upstream and upstream.peak_kib else None
    ratio, met = relative(a_peak, u_peak, lambda r: r <= 0.25)
    rows.append(
        Row(
            "peak memory (VmHWM of the agent process)",
            f"{u_peak:.0f} MiB" if u_peak else "—",
            f"{a_peak:.0f} MiB" if a_peak else "—",
            ratio,
            "keep ≤ 1/4 of upstream",
            met,
        )
    )

    print(
        f"Medians of {ns.runs}; {platform.node() or 'this machine'}, {os.cpu_count()} cores, "
        f"{datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}; Python {platform.python_version()}, "
        f"node {_node_version()}; upstream: {pi_version}."
    )
    print()
    print("| figure | upstream | atomic-host | ratio | goal | met? |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r.figure} | {r.upstream} | {r.atomic} | {r.ratio} | {r.goal} | {r.met} |")
    print()
    print("ratio = atomic-host / reference (the floor in the first row, upstream elsewhere); < 1 is faster.")
    print(
        f'- floor: `{Path(sys.executable).name} -c "import asyncio"` from {sys.prefix}, spawned the same way '
        f"(write a get_state line, read to the first line/EOF); atomic-host spawned as `{' '.join(ours.command)}`."
    )
    if a_ses:
        extra = f"; upstream {fmt_ms(u_ses.first_get_state)}" if u_ses and u_ses.first_get_state else ""
        print(
            f"- {turns}: {2 * ns.turns:,} messages, session file {fmt_bytes(a_ses.file_bytes)}. The first "
            f"`get_state` right after `switch_session`: atomic-host {fmt_ms(a_ses.first_get_state)}{extra}."
        )
    for command, error in missing_upstream.items():
        print(f"- upstream `{command}` is —: pi {PI_VERSION} has no such RPC command (it answers {error!r}).")
    if a_bash or u_bash:
        parts = [
            f"{name}: {b.delta_bytes:,} B as `bash_execution_update` deltas, {b.output_bytes:,} B in the "
            f"response `output`"
            for name, b in ((ours.name, a_bash), (up, u_bash))
            if b
        ]
        print(f"- bash bytes delivered per run (of {size:,}): " + "; ".join(parts) + ".")
    for agent in agents:
        if agent.peak_kib:
            phases = ", ".join(f"{k} {v / 1024:.0f} MiB" for k, v in agent.peak_kib.items())
            print(f"- VmHWM of {agent.name} per phase: {phases}.")
    for (name, phase), error in failures.items():
        print(f"- {name} {phase} could not be measured (—): {error}")
    for note in notes:
        print(f"- {note}")


def _node_version() -> str:
    node = shutil.which("node")
    if node is None:
        return "absent"
    try:
        return subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs per figure; medians (default 7)")
    parser.add_argument("--no-upstream", action="store_true", help="skip the upstream agent (no npm install)")
    parser.add_argument("--pi-dir", help="npm prefix for the upstream agent, kept between runs (default: a temp dir)")
    parser.add_argument("--turns", type=int, default=2000, help="turns in the long session (default 2000)")
    parser.add_argument("--bash-mb", type=int, default=20, help="MB the direct bash command prints (default 20)")
    ns = parser.parse_args()
    asyncio.run(run_all(ns))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        serve()
    else:
        main()
