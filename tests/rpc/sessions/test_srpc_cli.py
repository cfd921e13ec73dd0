"""CLI session flags of the real host: --session, --continue, --no-session, --session-dir, --name,
--export, and ``atomic sessions import|export`` between JSONL and SQLite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from srpc_helpers import chat, error_of, read_jsonl, state

from atomic_host.testing import host_env, start_host


def atomic(base: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the ``atomic`` CLI once (not RPC mode) in the sandbox of ``base``."""
    env = host_env(base / "agent", base / "faux.jsonl", base / "faux-log.jsonl")
    return subprocess.run(
        [sys.executable, "-m", "atomic_host", *args],
        cwd=base / "work",
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )


async def test_session_by_path_and_id_and_continue(srpc_host: Any, base: Path) -> None:
    async with srpc_host("--name", "first name") as host:
        await chat(host, "one")
        first = await state(host.client)
        assert first["sessionName"] == "first name"
    async with srpc_host("-n", "second") as host:
        await chat(host, "two")
        second = await state(host.client)
    assert second["sessionId"] != first["sessionId"]
    # --session by path and by id
    async with srpc_host("--session", first["sessionLocation"]) as host:
        st = await state(host.client)
        assert st["sessionId"] == first["sessionId"] and st["messageCount"] == 2
        assert st["sessionName"] == "first name"
    async with srpc_host("--session", first["sessionId"]) as host:
        await chat(host, "one more")
        assert (await state(host.client))["messageCount"] == 4
    # --continue / -c: the most recently modified session, which is now the first one
    async with srpc_host("-c") as host:
        st = await state(host.client)
        assert st["sessionId"] == first["sessionId"] and st["messageCount"] == 4
        messages = (await host.client.call("get_messages"))["messages"]
        assert messages[-1]["content"][0]["text"] == "re: one more"
    async with start_host("--session", "no-such-session", base=base, stderr=subprocess.PIPE) as host:
        assert await host.client.proc.wait() != 0
        err = (await host.client.proc.stderr.read()).decode()
    assert "Session not found: no-such-session" in err
    assert host.client.lines == []


async def test_no_session(srpc_host: Any, base: Path) -> None:
    async with srpc_host("--no-session") as host:
        c = host.client
        await chat(host, "ephemeral")
        st = await state(c)
        assert "sessionLocation" not in st and st["messageCount"] == 2
        assert await error_of(c, "export_html") == "Cannot export in-memory session to HTML"
        assert (await c.call("get_entries"))["entries"][-1]["message"]["role"] == "assistant"
    assert not (base / "agent" / "sessions").exists() or not list((base / "agent" / "sessions").rglob("*.jsonl"))


async def test_session_dir_flag(srpc_host: Any, base: Path) -> None:
    custom = base / "custom-sessions"
    async with srpc_host("--session-dir", str(custom)) as host:
        await chat(host, "stored elsewhere")
        st = await state(host.client)
        assert Path(st["sessionLocation"]).parent == custom
        listed = (await host.client.call("list_sessions"))["sessions"]
        assert [s["id"] for s in listed] == [st["sessionId"]]
    async with srpc_host() as host:  # the default store does not see it
        assert (await host.client.call("list_sessions"))["sessions"] == []
    async with srpc_host("--session-dir", str(custom), "-c") as host:
        assert (await state(host.client))["sessionId"] == st["sessionId"]


@pytest.mark.slow  # four CLI runs and three hosts: ~8 s here
async def test_export_flag_and_sessions_transfer(srpc_host: Any, base: Path) -> None:
    async with srpc_host() as host:
        await chat(host, "export <b>me</b>")
        st = await state(host.client)
    out = base / "out.html"
    done = atomic(base, "--export", st["sessionId"], str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(out)
    html = out.read_text()
    assert "re: export" in html and "<b>me</b>" not in html
    done = atomic(base, "--export", st["sessionLocation"])
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).is_file()
    assert atomic(base, "--export", "missing-id").returncode == 1

    # JSONL → SQLite, then the SQLite host sees the same session
    done = atomic(base, "sessions", "import")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1 session(s) copied to sqlite"
    async with srpc_host("--session-store", "sqlite") as host:
        c = host.client
        listed = (await c.call("list_sessions"))["sessions"]
        assert [s["id"] for s in listed] == [st["sessionId"]]
        assert await c.call("switch_session", sessionId=st["sessionId"]) == {"cancelled": False}
        assert (await state(c))["messageCount"] == 2
        await chat(host, "in sqlite now")
        await c.call("new_session")
        await chat(host, "sqlite only")
        sqlite_only = (await state(c))["sessionId"]
    # SQLite → JSONL: the new session appears as a file, the changed one is kept unless --overwrite
    done = atomic(base, "sessions", "export")
    assert done.returncode == 0, done.stderr
    async with srpc_host() as host:
        c = host.client
        ids = {s["id"] for s in (await c.call("list_sessions"))["sessions"]}
        assert ids == {st["sessionId"], sqlite_only}
        await c.call("switch_session", sessionId=sqlite_only)
        assert [m["role"] for m in (await c.call("get_messages"))["messages"]] == ["user", "assistant"]
    assert atomic(base, "sessions", "export", "--overwrite").returncode == 0
    records = read_jsonl(st["sessionLocation"])
    texts = [r["message"]["content"][0]["text"] for r in records if r.get("type") == "message"]
    assert texts[-1] == "re: in sqlite now"
