"""Helpers of the ``postgres`` session store tests: hosts on a schema of the test's own, rows read
back with psycopg, a few turns with the faux model."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from atomic_host.client import RpcClient
from atomic_host.testing import FauxScript, Host, host_env, start_host

BIG_TOOL = '''
from pydantic import BaseModel
from atomic_host import hookimpl
from atomic_host.contract.tools import Tool


class NoParams(BaseModel):
    pass


async def big(p: NoParams, ctx) -> str:
    return "\\n".join(f"{i:06d} line" for i in range(20_000))


@hookimpl
def register_tools(register):
    register(Tool("big_result", "Return a very large text.", NoParams, big))
'''
BIG_TEXT = "\n".join(f"{i:06d} line" for i in range(20_000))


@asynccontextmanager
async def pg_host(
    url: str, *args: str, base: Path, env: dict[str, str] | None = None, **kw: Any
) -> AsyncIterator[Host]:
    """A host on the ``postgres`` store at ``url`` (``ATOMIC_DATABASE_URL``), its stdout checked."""
    (base / "tmp").mkdir(exist_ok=True)
    (base / "faux.jsonl").write_text("")  # the faux provider counts lines per process: a fresh script
    env = {"ATOMIC_DATABASE_URL": url, "TMPDIR": str(base / "tmp"), **(env or {})}
    async with start_host("--session-store", "postgres", *args, base=base, env=env, **kw) as host:
        yield host
    host.assert_protocol_lines()


async def chat(host: Host, *texts: str) -> None:
    for text in texts:
        host.faux.push(f"re: {text}")
        await host.client.prompt_and_wait(text)


def rows(url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(sql, params).fetchall()


def entries(url: str, session_id: str) -> list[dict[str, Any]]:
    return [json.loads(e) for (e,) in rows(url, "SELECT entry FROM atomic_entries WHERE session_id = %s ORDER BY seq",
                                           session_id)]


def blob(url: str, session_id: str, name: str) -> bytes | None:
    found = rows(url, "SELECT data FROM atomic_blobs WHERE session_id = %s AND name = %s", session_id, name)
    return bytes(found[0][0]) if found else None


def tree(root: Path) -> dict[str, int]:
    """Every file and directory under ``root`` with its mode (what a test compares before/after)."""
    return {str(p.relative_to(root)): p.lstat().st_mode & 0o777 for p in root.rglob("*")} if root.exists() else {}


def user_texts(records: list[dict[str, Any]]) -> list[str]:
    """The texts of the user messages among stored entries."""
    from atomic_host.kit.messages import message_text

    messages = [r["message"] for r in records if r.get("type") == "message"]
    return [message_text(m, "") for m in messages if m.get("role") == "user"]


UID = os.getuid()


class Netns:
    """A network namespace joined to this one by a veth pair: a process started with :attr:`prefix`
    reaches this namespace at :attr:`server_ip`; :meth:`cut` drops the link (packets go nowhere, no
    error comes back, as when a machine's network dies) and :meth:`restore` brings it back."""

    def __init__(self) -> None:
        import subprocess

        n = os.getpid() % 200 + 20
        self.name = f"atomic-pgs-{os.getpid()}"
        self.outer, inner = f"vpgs{os.getpid()}"[:15], f"vpgn{os.getpid()}"[:15]
        self.server_ip, self.client_ip = f"10.231.{n}.1", f"10.231.{n}.2"
        self.prefix = ["ip", "netns", "exec", self.name]
        steps = [
            ["ip", "netns", "add", self.name],
            ["ip", "link", "add", self.outer, "type", "veth", "peer", "name", inner],
            ["ip", "link", "set", inner, "netns", self.name],
            ["ip", "addr", "add", f"{self.server_ip}/24", "dev", self.outer],
            ["ip", "link", "set", self.outer, "up"],
            [*self.prefix, "ip", "addr", "add", f"{self.client_ip}/24", "dev", inner],
            [*self.prefix, "ip", "link", "set", inner, "up"],
            [*self.prefix, "ip", "link", "set", "lo", "up"],
        ]
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                self.close()
                raise OSError(f"{' '.join(step)}: {done.stderr.strip()}")

    def _ip(self, *args: str) -> None:
        import subprocess

        subprocess.run(["ip", *args], check=True, capture_output=True)

    def cut(self) -> None:
        self._ip("link", "set", self.outer, "down")

    def restore(self) -> None:
        self._ip("link", "set", self.outer, "up")

    def close(self) -> None:
        import subprocess

        subprocess.run(["ip", "link", "del", self.outer], capture_output=True, check=False)
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True, check=False)


def cut_link_setup(netns: Netns, server: Any, tmp_path: Path) -> tuple[str, str, Path]:
    """A fresh schema on ``server``: its URL from here, the same URL from inside ``netns``, and a
    new work directory (the project) under ``tmp_path``."""
    url = server.fresh_url()
    work = tmp_path / "work"
    work.mkdir()
    return url, url.replace("@127.0.0.1:", f"@{netns.server_ip}:"), work


@asynccontextmanager
async def host_in(netns: Netns, url: str, base: Path, cwd: Path) -> AsyncIterator[Host]:
    """``atomic --mode rpc`` on the postgres store, started inside the namespace."""
    agent = base / "agent"
    agent.mkdir(parents=True)
    script = FauxScript(base / "faux.jsonl")
    env = host_env(agent, script.path, base / "faux-log.jsonl", {"ATOMIC_DATABASE_URL": url})
    client = RpcClient(
        ["--provider", "faux", "--session-store", "postgres"],
        command=[*netns.prefix, sys.executable, "-m", "atomic_host", "--mode", "rpc"],
        cwd=str(cwd),
        env=env,
    )
    await client.start()
    try:
        yield Host(client, agent, cwd, script, base / "faux-log.jsonl")
    finally:
        if client.proc is not None and client.proc.returncode is None:
            client.proc.kill()
        await client.close()


def fill(url: str, count: int, cwd: str) -> None:
    """``count`` 2-turn sessions in ``cwd``, rows as the store writes them (listing record included),
    with one COPY per table: 10,000 sessions in seconds, where 10,000 hosts would take an hour."""
    import psycopg

    from atomic_host.kit.sessions.listing import ListingState
    from atomic_host.kit.sessions.store import new_header
    from builtin_plugins.stores.postgres import _session_row
    from builtin_plugins.stores.tables import dumps

    template = [
        {"type": "message", "id": "00000001", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
         "message": {"role": "user", "content": "hello " * 20, "timestamp": 1}},
        {"type": "message", "id": "00000002", "parentId": "00000001", "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}], "provider": "p",
                     "model": "m", "stopReason": "stop", "timestamp": 2}},
    ]  # fmt: skip
    state = ListingState()
    for entry in template:
        state.apply(entry)
    rows = [_session_row(new_header(cwd), state, len(template)) for _ in range(count)]
    columns = list(rows[0])
    from unittest import mock

    from builtin_plugins.stores import open_builtin_store

    with mock.patch.dict(os.environ, {"ATOMIC_DATABASE_URL": url}):
        open_builtin_store("postgres", "/nonexistent", None, cwd).close()  # the schema
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        with cur.copy(f"COPY atomic_sessions ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row([row[c] for c in columns])
        with cur.copy("COPY atomic_entries (session_id, seq, entry) FROM STDIN") as copy:
            for row in rows:
                for seq, entry in enumerate(template):
                    copy.write_row((row["id"], seq, dumps(entry)))


def cpu_ms(pid: int) -> float:
    """CPU time process ``pid`` has used, in ms: every thread's, the ended ones' too (``stat``
    counts 10 ms ticks; summing the threads' ``schedstat`` would be finer but loses a thread that
    ends between two readings: a listing then seemed to cost less than nothing)."""
    stat = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(stat[11]) + int(stat[12])) * 1000 / os.sysconf("SC_CLK_TCK")
