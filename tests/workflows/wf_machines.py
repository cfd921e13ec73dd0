"""Several "machines" on one PostgreSQL: processes with their own HOME, agent dir and hostname
(``unshare --uts`` where permitted), one shared session directory (the shared store), and a mock
Anthropic-format model server that answers each stage by its prompt, counts the requests per
stage and per machine (each machine has its own API key), and can hold a stage's request open."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from contextlib import asynccontextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from atomic_host.client import RpcClient
from atomic_host.testing import host_env
from atomic_host.testing_sse import ServingThread, anthropic_frames

THREE_STAGES = """\
description = "three stages"
[[stages]]
name = "one"
prompt = "STAGE-1 {input}"
[[stages]]
name = "two"
prompt = "STAGE-2 {input} after {stages.one.output}"
[[stages]]
name = "three"
prompt = "STAGE-3 {input} after {stages.two.output}"
"""
QUIET: dict[str, Any] = {"sessionSummary": {"enabled": False}, "retry": {"enabled": False}}
MODEL = "mock/m-mock"


def _first_user_text(body: dict[str, Any]) -> str:
    for message in body.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


class MockModel:
    """Answers ``STAGE-<n> <input> ...`` with ``out-<n>-<input>``; ``hold`` (a set of
    ``(stage, input)``) keeps those requests open until the client goes away."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, float]] = []  # (prompt head, api key, time)
        self.hold: set[tuple[str, str]] = set()
        self.lock = threading.Lock()
        mock = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                text = _first_user_text(body)
                words = text.split()
                stage, run_input = (words[0], words[1]) if len(words) > 1 else (text, "")
                with mock.lock:
                    mock.requests.append((f"{stage} {run_input}", self.headers.get("x-api-key", ""), time.time()))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                while (stage, run_input) in mock.hold:  # until the host is killed, or the hold is lifted
                    time.sleep(0.2)
                    try:
                        self.wfile.write(b": ping\n\n")
                        self.wfile.flush()
                    except OSError:
                        return
                answer = f"out-{stage.split('-')[-1]}-{run_input}"
                with contextlib.suppress(OSError):  # a killed host's connection
                    for frame in anthropic_frames(_message(answer)):
                        self.wfile.write(frame.encode())
                    self.wfile.flush()

        self.server = ThreadingHTTPServer(("0.0.0.0", 0), Handler)  # also reachable from a namespace
        self.server.daemon_threads = True
        self.thread = ServingThread(self.server)

    def url_at(self, address: str = "127.0.0.1") -> str:
        return f"http://{address}:{self.server.server_address[1]}"

    def count(self, head: str) -> int:
        with self.lock:
            return sum(1 for r in self.requests if r[0] == head)

    def by_key(self, head_prefix: str = "") -> Counter[str]:
        with self.lock:
            return Counter(r[1] for r in self.requests if r[0].startswith(head_prefix))

    def first_time(self, head: str, after: float = 0) -> float | None:
        with self.lock:
            return next((r[2] for r in self.requests if r[0] == head and r[2] > after), None)

    def stop(self) -> None:
        self.thread.stop()


def _message(text: str) -> list[dict[str, Any]]:
    usage = {"input_tokens": 5, "output_tokens": 3}
    return [
        {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                               "model": "m-mock", "content": [], "usage": usage}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": usage},
        {"type": "message_stop"},
    ]  # fmt: skip


def can_unshare() -> bool:
    if shutil.which("unshare") is None:
        return False
    done = subprocess.run(["unshare", "--uts", "true"], capture_output=True, check=False)
    return done.returncode == 0


class Machine:
    """A HOME with an agent dir (models.json with this machine's key, settings, the workflow
    file), a hostname, and the shared session directory."""

    def __init__(
        self,
        root: Path,
        name: str,
        mock: MockModel,
        database: str,
        sessions: Path,
        uts: bool,
        netns: str | None = None,
        address: str = "127.0.0.1",
        store: str = "dir",
    ) -> None:
        """``netns``: run its processes in that network namespace, reaching the mock at ``address``.
        ``store``: ``dir`` (the shared session directory; the runs in ``database``) or ``postgres``
        (sessions and runs in ``database``, the store's ``ATOMIC_DATABASE_URL``)."""
        self.name, self.uts, self.netns, self.store, self.database = name, uts, netns, store, database
        self.home = root / name
        self.agent = self.home / "agent"
        self.key = f"key-{name}"
        self.sessions = sessions
        self.agent.mkdir(parents=True, exist_ok=True)
        model = {"id": "m-mock", "contextWindow": 200000, "maxTokens": 32000, "cost": {"input": 1, "output": 2}}
        provider = {"baseUrl": mock.url_at(address), "api": "anthropic-messages", "apiKey": self.key, "models": [model]}
        (self.agent / "models.json").write_text(json.dumps({"providers": {"mock": provider}}))
        settings = {**QUIET, "workflows": {"databaseUrl": database}} if store == "dir" else QUIET
        (self.agent / "settings.json").write_text(json.dumps(settings))
        (self.agent / "workflows").mkdir(exist_ok=True)
        (self.agent / "workflows" / "three.toml").write_text(THREE_STAGES)

    def env(self) -> dict[str, str]:
        env = host_env(self.agent, self.home / "no-faux.jsonl", self.home / "no-faux-log.jsonl")
        for k in ("ATOMIC_FAUX_SCRIPT", "ATOMIC_FAUX_LOG"):
            env.pop(k, None)
        env["HOME"] = str(self.home)
        if self.store == "postgres":
            env["ATOMIC_DATABASE_URL"] = self.database
        return env

    def store_args(self) -> list[str]:
        if self.store == "postgres":
            return ["--session-store", "postgres"]
        return ["--session-dir", str(self.sessions)]

    def finals(self, session: str, run_id: str) -> int:
        """How many final messages of ``run_id`` the stored session (its location) holds."""
        if self.store == "dir":
            return finals_in(session, run_id)
        from pg_helpers import stored_entries

        entries = stored_entries(self.database, session.rpartition("#")[2])
        return sum(1 for e in entries if _is_final(e, run_id))

    def stage_headers(self, run_id: str) -> list[dict[str, Any]]:
        """The headers of the stored stage sessions of ``run_id``."""
        if self.store == "dir":
            paths = self.sessions.rglob("*.jsonl")
            headers = []
            for path in paths:
                with open(path, encoding="utf-8") as fh:
                    headers.append(json.loads(fh.readline()))
        else:
            headers = [json.loads(h) for (h,) in sql(self.database, "SELECT header FROM atomic_sessions")]
        return [h for h in headers if isinstance(h.get("workflow"), dict) and h["workflow"].get("runId") == run_id]

    def command(self, *argv: str) -> list[str]:
        """``python -m atomic_host *argv`` on this machine (under its own hostname when permitted)."""
        base = [sys.executable, "-m", "atomic_host", *argv]
        if self.uts:
            base = ["unshare", "--uts", "sh", "-c", f'hostname {self.name} && exec "$@"', "sh", *base]
        return ["ip", "netns", "exec", self.netns, *base] if self.netns else base

    @asynccontextmanager
    async def host(self, project: Path, *args: str):
        """An ``atomic --mode rpc`` host in ``project`` on the shared session directory."""
        client = RpcClient(
            ["--model", MODEL, *self.store_args(), *args],
            command=self.command("--mode", "rpc"),
            cwd=str(project),
            env=self.env(),
            stderr=None,
        )
        await client.start()
        try:
            yield client
        finally:
            await client.close()

    async def worker(self, *projects: Path) -> asyncio.subprocess.Process:
        """``atomic worker`` serving ``projects``; returns once it says it serves them."""
        proc = await asyncio.create_subprocess_exec(
            *self.command("worker", *self.store_args(), *map(str, projects)),
            cwd=str(projects[0]),
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stderr is not None
        lines = []
        while True:
            line = await asyncio.wait_for(proc.stderr.readline(), 60)
            lines.append(line.decode(errors="replace"))
            if not line:
                raise AssertionError(f"atomic worker exited: {''.join(lines)}")
            if b"atomic worker: serving" in line:
                asyncio.get_running_loop().create_task(_drain(proc.stderr))
                return proc


async def _drain(stream: asyncio.StreamReader) -> None:
    while await stream.readline():
        pass


async def stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), 15)
        except TimeoutError:
            proc.kill()
            await proc.wait()


async def until(predicate: Any, timeout: float = 30, step: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met")
        await asyncio.sleep(step)


def custom_messages(session_file: str) -> list[dict[str, Any]]:
    """The ``custom_message`` entries of a stored session."""
    with open(session_file, encoding="utf-8") as fh:
        entries = [json.loads(line) for line in fh]
    return [e for e in entries if e.get("type") == "custom_message"]


def _is_final(entry: dict[str, Any], run_id: str) -> bool:
    details = entry.get("details")
    return entry.get("type") == "custom_message" and isinstance(details, dict) and details.get("runId") == run_id


def finals_in(session_file: str, run_id: str) -> int:
    """How many ``workflow`` custom messages of ``run_id`` the stored session file holds."""
    return sum(1 for e in custom_messages(session_file) if _is_final(e, run_id))


def sql(url: str, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(statement, params)
        return cur.fetchall() if cur.description else []


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Link:
    """A network namespace joined to this one by a veth pair (10.203.<n>.1 here, .2 there):
    ``cut()`` takes the link down as a pulled cable would, ``restore()`` brings it back."""

    def __init__(self, n: int) -> None:
        self.ns, self.here, self.there = f"atomic-h8-{os.getpid()}-{n}", f"ah8a{n}", f"ah8b{n}"
        self.address, self.peer = f"10.203.{n}.1", f"10.203.{n}.2"

    def _ip(self, *args: str, ns: bool = False) -> None:
        command = ["ip", "netns", "exec", self.ns, "ip", *args] if ns else ["ip", *args]
        subprocess.run(command, check=True, capture_output=True, timeout=30)

    def create(self) -> Link:
        self._ip("netns", "add", self.ns)
        self._ip("link", "add", self.here, "type", "veth", "peer", "name", self.there)
        self._ip("link", "set", self.there, "netns", self.ns)
        self._ip("addr", "add", f"{self.address}/24", "dev", self.here)
        self._ip("link", "set", self.here, "up")
        self._ip("addr", "add", f"{self.peer}/24", "dev", self.there, ns=True)
        self._ip("link", "set", self.there, "up", ns=True)
        self._ip("link", "set", "lo", "up", ns=True)
        return self

    def cut(self) -> None:
        self._ip("link", "set", self.here, "down")

    def restore(self) -> None:
        self._ip("link", "set", self.here, "up")

    def remove(self) -> None:
        subprocess.run(["ip", "link", "del", self.here], capture_output=True, check=False)
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True, check=False)
