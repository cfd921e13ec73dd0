"""Durability through the host: SIGKILL while it appends, then reopen — every acknowledged entry
is there and the file (with a possibly torn last line) still loads and keeps growing."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path
from typing import Any

import pytest
from pg_helpers import POSTGRES_STORE
from srpc_helpers import read_jsonl, state

BACKENDS = [pytest.param((), id="jsonl"), pytest.param(("--session-store", "sqlite"), id="sqlite"), POSTGRES_STORE]


@pytest.mark.parametrize("store", BACKENDS)
async def test_sigkill_during_set_session_name(srpc_host: Any, store: tuple[str, ...]) -> None:
    acked: list[str] = []
    async with srpc_host(*store) as host:
        c = host.client
        host.faux.push("saved")
        await c.prompt_and_wait("make it persistent")  # an assistant message: the session is written
        session_id = (await state(c))["sessionId"]

        async def writer() -> None:
            for i in range(10_000):
                await c.call("set_session_name", name=f"name-{i}")
                acked.append(f"name-{i}")

        task = asyncio.create_task(writer())
        while len(acked) < 40:
            await asyncio.sleep(0.005)
        # more requests in flight, then the kill
        for i in range(20):
            await c.send_raw(json.dumps({"type": "set_session_name", "name": f"late-{i}"}).encode() + b"\n")
        assert c.proc is not None
        c.proc.send_signal(signal.SIGKILL)
        await c.proc.wait()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert len(acked) >= 40
    async with srpc_host(*store, "--session", session_id) as host:
        c = host.client
        names = [e["name"] for e in (await c.call("get_entries"))["entries"] if e["type"] == "session_info"]
        assert names[: len(acked)] == acked  # every acknowledged one, in order
        assert (await state(c))["sessionName"] == names[-1]
        await c.call("set_session_name", name="after restart")
        host.faux.push("still works")
        await c.prompt_and_wait("continue")
    async with srpc_host(*store, "-c") as host:
        st = await state(host.client)
        assert st["sessionId"] == session_id and st["sessionName"] == "after restart"
        assert st["messageCount"] == 4


async def test_sigkill_during_tool_turns_and_torn_line(srpc_host: Any) -> None:
    async with srpc_host() as host:
        c = host.client
        for i in range(200):
            host.faux.push(
                {"content": [{"type": "toolCall", "name": "bash", "arguments": {"command": f"echo turn-{i}"}}]}
            )
        seen: list[str] = []
        c.on_event(lambda e: seen.append(e["type"]) if e["type"] == "message_end" else None)
        await c.prompt("loop")
        while len(seen) < 30:
            await asyncio.sleep(0.01)
        path = Path((await state(c))["sessionLocation"])
        assert c.proc is not None
        c.proc.send_signal(signal.SIGKILL)
        await c.proc.wait()
    # every message_end the client saw is on disk (entries are written before the event)
    on_disk = [r for r in read_jsonl(path) if r.get("type") == "message"]
    assert len(on_disk) >= 30
    with path.open("ab") as f:  # simulate a torn last line from a crash mid-write
        f.write(b'{"type":"message","id":"torn0001","parentId":')
    async with srpc_host("-c") as host:
        c = host.client
        st = await state(c)
        entries = (await c.call("get_entries"))["entries"]
        assert "torn0001" not in {e["id"] for e in entries}
        assert len([e for e in entries if e["type"] == "message"]) == len(on_disk)
        report = await c.call("start_pending_recovery")
        assert report["dropped"] in (0, 1)
        host.faux.push("recovered")
        await c.prompt_and_wait("are you there")
        assert st["sessionLocation"] == str(path)
    lines = path.read_bytes().split(b"\n")
    bad = [line for line in lines if line and not _parses(line)]
    assert bad == [b'{"type":"message","id":"torn0001","parentId":']
    assert read_jsonl(path)[-1]["message"]["content"][0]["text"] == "recovered"


def _parses(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True
