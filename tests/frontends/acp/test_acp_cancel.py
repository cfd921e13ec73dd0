"""Slice 3: session/cancel aborts the run and the pending prompt answers ``cancelled``."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from acp import RequestError, text_block
from acp_helpers import acp_host, wait_for

SLOW = {"content": "word " * 400, "chunkDelayMs": 50}


async def test_cancel_while_streaming(tmp_path: Path) -> None:
    async with acp_host(tmp_path) as host:
        sid = (await host.new_session()).session_id
        host.faux.push(SLOW)
        pending = asyncio.create_task(host.conn.prompt(session_id=sid, prompt=[text_block("talk")]))
        await wait_for(lambda: host.client.of("agent_message_chunk", sid))
        await host.conn.cancel(session_id=sid)
        response = await asyncio.wait_for(pending, 10)
        assert response.stop_reason == "cancelled"
        assert len(host.client.text(session_id=sid)) < len(SLOW["content"])


async def test_cancel_during_a_tool_call(tmp_path: Path) -> None:
    async with acp_host(tmp_path, settings={"acp": {"defaultMode": "allow_all"}}) as host:
        sid = (await host.new_session()).session_id
        host.faux.tool_call("bash", {"command": "sleep 30"}, "slow-1")
        host.faux.push("never reached")
        pending = asyncio.create_task(host.conn.prompt(session_id=sid, prompt=[text_block("wait")]))
        await wait_for(lambda: host.client.of("tool_call", sid))
        started = time.monotonic()
        await host.conn.cancel(session_id=sid)
        response = await asyncio.wait_for(pending, 10)
        assert response.stop_reason == "cancelled"
        assert time.monotonic() - started < 5
        final = [u for u in host.client.of("tool_call_update", sid) if u.status][-1]
        assert final.status == "failed"


async def test_cancel_then_prompt_again_at_once(tmp_path: Path) -> None:
    """What editors do when the user sends a new message while the agent works."""
    async with acp_host(tmp_path) as host:
        sid = (await host.new_session()).session_id
        host.faux.push(SLOW, "second answer")
        first = asyncio.create_task(host.conn.prompt(session_id=sid, prompt=[text_block("one")]))
        await wait_for(lambda: host.client.of("agent_message_chunk", sid))
        await host.conn.cancel(session_id=sid)
        second = await asyncio.wait_for(host.conn.prompt(session_id=sid, prompt=[text_block("two")]), 10)
        assert (await first).stop_reason == "cancelled"
        assert second.stop_reason == "end_turn"
        assert host.client.text(session_id=sid).endswith("second answer")


async def test_cancel_when_idle_is_harmless(tmp_path: Path) -> None:
    async with acp_host(tmp_path) as host:
        sid = (await host.new_session()).session_id
        await host.conn.cancel(session_id=sid)
        host.faux.push("still here")
        assert (await host.conn.prompt(session_id=sid, prompt=[text_block("hi")])).stop_reason == "end_turn"


async def test_second_prompt_while_running_is_refused(tmp_path: Path) -> None:
    async with acp_host(tmp_path) as host:
        sid = (await host.new_session()).session_id
        host.faux.push({"content": "word " * 60, "chunkDelayMs": 10, "stopReason": "length"})
        first = asyncio.create_task(host.conn.prompt(session_id=sid, prompt=[text_block("one")]))
        await wait_for(lambda: host.client.of("agent_message_chunk", sid))
        with pytest.raises(RequestError):
            await host.conn.prompt(session_id=sid, prompt=[text_block("two")])
        assert (await asyncio.wait_for(first, 20)).stop_reason == "max_tokens"  # its turn was not taken over
