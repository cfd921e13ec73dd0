"""Two hosts, one session; and writes that fail underneath (issue 8).

The first host to open a session holds an advisory lock on its file for as long as it has it
open; a second host can open the same session and read it, but every write it attempts fails
with a clear error until the first lets go (docs/host.md). A failed append (here: the file-size
limit, as a full disk or quota behaves) answers with an error, leaves memory and disk alike, and
the next successful write continues the same file. A file deleted underneath is written again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from pg_helpers import POSTGRES_STORE, stored_entries
from srpc_helpers import chat, read_jsonl, state


def _user_texts(records: list[dict[str, Any]]) -> list[str]:
    out = []
    for r in records:
        m = r.get("message") or {}
        if r.get("type") == "message" and m.get("role") == "user":
            content = m["content"]
            out.append(content if isinstance(content, str) else content[0]["text"])
    return out


BACKENDS = [pytest.param((), id="jsonl"), pytest.param(("--session-store", "sqlite"), id="sqlite"), POSTGRES_STORE]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_second_process_can_read_a_locked_session_but_not_write_it(
    srpc_host: Any, base: Path, backend: tuple[str, ...]
) -> None:
    err = (base / "second.err").open("wb")
    async with srpc_host(*backend) as first:
        await chat(first, "from the first host")
        owner = await state(first.client)
        async with srpc_host(*backend, stderr=err.fileno()) as second:
            c = second.client
            assert await c.call("switch_session", sessionId=owner["sessionId"]) == {"cancelled": False}
            assert "from the first host" in str(await c.get_messages())  # reading works
            response = await c.request({"type": "set_session_name", "name": "clash"})
            assert response["success"] is False
            assert response["error"].startswith("Session is open for writing in another atomic process: ")
            second.faux.push("never saved")
            events = await c.prompt_and_wait("from the second host")
            ends = [e for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
            assert ends and ends[-1]["message"]["stopReason"] == "error"
            assert "Session is open for writing in another atomic process" in ends[-1]["message"]["errorMessage"]
            assert "from the second host" not in str(await c.get_messages())  # memory agrees with the file
            await chat(first, "first host goes on")  # the owner is not disturbed
        stored = _stored(owner["sessionLocation"], srpc_host.database)
        assert _user_texts(stored) == ["from the first host", "first host goes on"]
    err.close()
    assert "open for writing in another atomic process" in (base / "second.err").read_text()
    async with srpc_host(*backend) as third:  # the first host is gone: the lock went with it
        c = third.client
        assert await c.call("switch_session", sessionId=owner["sessionId"]) == {"cancelled": False}
        await chat(third, "third host continues")
    assert _user_texts(_stored(owner["sessionLocation"], srpc_host.database))[-1] == "third host continues"


def _stored(location: str, database: list[str]) -> list[dict[str, Any]]:
    """The session's records as the store holds them: the JSONL file, the SQLite or PostgreSQL rows."""
    if location.startswith("postgres:"):
        return stored_entries(database[0], location.rpartition("#")[2])
    if not location.startswith("sqlite:"):
        return read_jsonl(location)
    db, _, session_id = location[len("sqlite:") :].rpartition("#")
    with contextlib.closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT entry FROM entries WHERE session_id = ? ORDER BY seq", (session_id,))
        return [json.loads(entry) for (entry,) in rows]


async def test_switching_to_the_open_session_in_the_same_process_keeps_writing(srpc_host: Any) -> None:
    async with srpc_host() as host:
        await chat(host, "one")
        me = await state(host.client)
        assert await host.client.call("switch_session", sessionId=me["sessionId"]) == {"cancelled": False}
        await chat(host, "two")
        assert _user_texts(read_jsonl(me["sessionLocation"])) == ["one", "two"]


async def test_a_failed_append_answers_an_error_and_the_next_write_continues_the_file(srpc_host: Any) -> None:
    async with srpc_host() as host:
        c = host.client
        await chat(host, "before the disk filled")
        st = await state(c)
        path = Path(st["sessionLocation"])
        pid = c.proc.pid
        size = path.stat().st_size
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (size, resource.RLIM_INFINITY))  # appends fail: EFBIG
        try:
            response = await c.request({"type": "set_session_name", "name": "no room"})
            assert response["success"] is False and "File too large" in response["error"]
            host.faux.push("lost reply")
            events = await c.prompt_and_wait("while full")
            ends = [e for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
            assert ends[-1]["message"]["stopReason"] == "error"
            assert "Could not save the session" in ends[-1]["message"]["errorMessage"]
            assert path.stat().st_size == size  # nothing half-written
            assert "while full" not in str(await c.get_messages())
            assert "sessionName" not in await state(c)  # the name that could not be saved was not set
        finally:
            resource.prlimit(pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        await chat(host, "after space came back")
        records = read_jsonl(path)
        assert _user_texts(records) == ["before the disk filled", "after space came back"]
        ids = {r["id"] for r in records[1:]}
        assert all(r.get("parentId") in ids or r.get("parentId") is None for r in records[1:])  # one unbroken tree
        messages = await c.get_messages()
        assert [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
                for m in messages if m["role"] == "user"] == _user_texts(records)  # fmt: skip
        assert c.proc.returncode is None  # SIGXFSZ did not kill it


async def test_a_session_file_deleted_underneath_fails_the_next_write_and_is_not_recreated(srpc_host: Any) -> None:
    """A delete is not undone behind the user's back (issue 24): the next write fails loudly, and
    a clone keeps the conversation in a new session."""
    async with srpc_host() as host:
        await chat(host, "first")
        path = Path((await state(host.client))["sessionLocation"])
        path.unlink()
        host.faux.push("re: second")
        events = await host.client.prompt_and_wait("second")
        ends = [e for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
        assert ends[-1]["message"]["stopReason"] == "error"
        assert ends[-1]["message"]["errorMessage"].startswith("Could not save the session: Session was deleted")
        assert not path.exists()
        assert await host.client.call("clone") == {"cancelled": False}
        assert _user_texts(read_jsonl((await state(host.client))["sessionLocation"])) == ["first"]


@pytest.fixture(autouse=True)
def _no_leftover_limit() -> None:
    assert resource.getrlimit(resource.RLIMIT_FSIZE)[0] == resource.RLIM_INFINITY


async def test_loading_a_big_session_leaves_the_loop_free(srpc_host: Any, base: Path) -> None:
    """switch_session reads and parses in a thread: ``abort`` answers while a 40 MB file loads."""
    import time
    import uuid

    async with srpc_host() as host:
        c = host.client
        await chat(host, "small")
        store_dir = Path((await state(c))["sessionLocation"]).parent
        sid = str(uuid.uuid4())
        big = store_dir / f"2026-01-01T00-00-00-000Z_{sid}.jsonl"
        header = {"type": "session", "version": 3, "id": sid, "timestamp": "2026-01-01T00:00:00.000Z",
                  "cwd": str(host.cwd)}  # fmt: skip
        lines = [json.dumps(header)]
        parent = None
        for i in range(25_000):
            entry_id = f"{i:08x}"
            role = "user" if i % 2 == 0 else "assistant"
            message: dict[str, Any] = {"role": role, "timestamp": 1, "content": [{"type": "text", "text": "w " * 800}]}
            if role == "assistant":
                message |= {"provider": "faux", "model": "faux-1", "stopReason": "stop", "api": "faux"}
            lines.append(json.dumps({"type": "message", "id": entry_id, "parentId": parent,
                                     "timestamp": "2026-01-01T00:00:01.000Z", "message": message}))  # fmt: skip
            parent = entry_id
        big.write_text("\n".join(lines) + "\n")
        t0 = time.monotonic()
        switch = asyncio.ensure_future(c.request({"type": "switch_session", "sessionId": sid}, timeout=60))
        await asyncio.sleep(0.02)
        await c.call("abort")
        abort_latency = time.monotonic() - t0
        assert (await switch)["success"] is True
        switch_time = time.monotonic() - t0
        assert abort_latency < max(0.25, switch_time / 2), (abort_latency, switch_time)
        assert (await state(c))["sessionId"] == sid
