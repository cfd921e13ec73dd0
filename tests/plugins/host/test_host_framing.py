"""Framing of the JSONL transport, against the real ``atomic --mode rpc`` subprocess (semantics §1)."""

from __future__ import annotations

import asyncio
import json
import signal
import time

from atomic_host.testing import start_host


def _line(obj: dict) -> bytes:
    # ensure_ascii=False: U+2028/U+2029 go over the wire as raw UTF-8 bytes, not \u escapes.
    return json.dumps(obj, ensure_ascii=False).encode() + b"\n"


async def test_separators_crlf_and_blank_lines(rpc_host) -> None:
    weird = "a\u2028b\u2029c"
    async with rpc_host() as host:
        c = host.client
        await c.send_raw(_line({"type": "set_session_name", "name": weird, "id": "n1"}))
        await c.send_raw(b"\n\n   \n\r\n")  # blank lines: ignored, no response
        await c.send_raw(b'{"type":"get_state","id":"crlf"}\r\n')
        state = await c.request({"type": "get_state", "id": "after"})
        assert state["data"]["sessionName"] == weird
        ids = [r.get("id") for r in c.responses]
        assert ids == ["n1", "crlf", "after"]  # nothing answered the blank lines
        assert all(r["success"] for r in c.responses)

        host.faux.push("ok")
        await c.prompt_and_wait(f"prompt {weird}")
        user = next(m for m in (await c.get_messages()).messages if m["role"] == "user")
        text = user["content"] if isinstance(user["content"], str) else user["content"][0]["text"]
        assert text == f"prompt {weird}"
    # Output keeps them escaped so a naive splitter cannot break a record.
    assert not any("\u2028" in line or "\u2029" in line for line in c.lines)


async def test_50mb_line(rpc_host) -> None:
    big = "x" * (50 * 1024 * 1024) + "\u00e9end"
    async with rpc_host("--no-session") as host:
        c = host.client
        started = time.monotonic()
        await c.send_raw(_line({"type": "set_session_name", "name": big, "id": "big"}))
        # A small command right behind the huge one: framing finds both, in order.
        resp = await c.request({"type": "get_session_stats", "id": "small"}, timeout=20)
        elapsed = time.monotonic() - started
        assert resp["success"] is True
        assert [r["id"] for r in c.responses] == ["big", "small"]
        assert c.responses[0]["success"] is True
        # The name arrived whole: the session_info_changed event echoes it once.
        changed = await c.wait_for_event("session_info_changed")
        assert changed["name"] == big
        assert elapsed < 15, elapsed  # ~3 s on the 2-core box


async def test_partial_last_line_processed_then_exit_0(rpc_host) -> None:
    async with rpc_host() as host:
        c = host.client
        await c.send_raw(b'{"type":"get_state","id":"first"}\n{"type":"set_session_name","name":"tail","id":"last"}')
        assert c.proc and c.proc.stdin
        c.proc.stdin.close()  # EOF without a final LF
        code = await asyncio.wait_for(c.proc.wait(), 10)
        await asyncio.sleep(0)
    assert code == 0
    last = [r for r in c.responses if r.get("id") == "last"]
    assert last and last[0]["success"] is True


async def test_sigterm_exits_143() -> None:
    async with start_host() as host:
        c = host.client
        await c.get_state()
        assert c.proc
        c.proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(c.proc.wait(), 10)
        assert code == 143
        host.assert_protocol_lines()


async def test_sighup_exits_129() -> None:
    async with start_host() as host:
        await host.client.get_state()
        assert host.client.proc
        host.client.proc.send_signal(signal.SIGHUP)
        assert await asyncio.wait_for(host.client.proc.wait(), 10) == 129
