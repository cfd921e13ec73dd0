"""Leaving a run stops it: breaking out of ``stream()``, a timeout of ``run()`` and a cancelled task
each abort the run, which the model server sees as its stream cancelled; ``abort_on_exit=False``
leaves the run going; the next prompt after leaving starts cleanly."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from client_sse import MODEL, stalled_reply, text_reply, write_models

from atomic_host.client import ClientTimeout
from atomic_host.testing import start_host
from atomic_host.testing_sse import SSEServer

pytestmark = pytest.mark.slow  # runs left and aborted, each settling

QUIET = {"sessionSummary": {"enabled": False}, "retry": {"enabled": False}}


async def _cancelled(server: SSEServer, index: int, within: float = 5.0) -> float:
    """Seconds until the server saw request ``index``'s client leave (fails after ``within``)."""
    t0 = time.monotonic()
    while index not in server.cancelled:
        assert time.monotonic() - t0 < within, f"the model server never saw request {index} cancelled"
        await asyncio.sleep(0.02)
    return time.monotonic() - t0


async def test_breaking_out_of_a_stream_aborts_the_run_and_the_next_prompt_runs(tmp_path: Path) -> None:
    with SSEServer() as server:
        write_models(tmp_path / "agent", server.base_url)
        server.enqueue(stalled_reply())
        server.enqueue(text_reply("second answer"))
        async with start_host("--model", MODEL, base=tmp_path, settings=QUIET) as host:
            c = host.client
            deltas = 0
            async for event in c.stream("first"):
                if event.type == "message_update" and event.assistant_message_event.type == "text_delta":
                    deltas += 1
                    if deltas == 2:
                        break
            # nothing to wait for after the break: the next run waits for the aborted one to settle
            result = await c.run("second")
            assert result.text == "second answer" and result.stop_reason == "stop"
            assert result[0].type == "agent_start" and result.num_turns == 1
            assert 0 in server.cancelled
            aborted = next(m for m in (await c.get_messages()).messages if m.role == "assistant")
            assert aborted.stop_reason == "aborted"
            assert [r["command"] for r in c.responses].count("abort") == 1
        host.assert_protocol_lines()


async def test_a_run_that_times_out_is_aborted_and_says_what_it_waited_for(tmp_path: Path) -> None:
    with SSEServer() as server:
        write_models(tmp_path / "agent", server.base_url)
        server.enqueue(stalled_reply())
        async with start_host("--model", MODEL, base=tmp_path, settings=QUIET) as host:
            with pytest.raises(ClientTimeout, match=r"did not settle within 1\.5s"):
                await host.client.run("hang", timeout=1.5)
            assert await _cancelled(server, 0) < 2
            await host.client.wait_for_idle()  # the aborted run settles
            state = await host.client.get_state()
            assert state.is_streaming is False


async def test_a_cancelled_run_task_aborts_the_run(tmp_path: Path) -> None:
    with SSEServer() as server:
        write_models(tmp_path / "agent", server.base_url)
        server.enqueue(stalled_reply())
        async with start_host("--model", MODEL, base=tmp_path, settings=QUIET) as host:
            c = host.client
            task = asyncio.ensure_future(c.run("hang"))
            await c.wait_for_event(
                lambda e: e["type"] == "message_update" and e["assistantMessageEvent"]["type"] == "text_delta"
            )
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert await _cancelled(server, 0) < 2


async def test_abort_on_exit_false_leaves_the_run_going(tmp_path: Path) -> None:
    with SSEServer() as server:
        write_models(tmp_path / "agent", server.base_url)
        server.enqueue(stalled_reply())
        server.enqueue(stalled_reply())
        async with start_host("--model", MODEL, base=tmp_path, settings=QUIET) as host:
            c = host.client
            async for event in c.stream("keep going", abort_on_exit=False):
                if event.type == "message_update":
                    break
            await asyncio.sleep(1.5)
            assert server.cancelled == [] and (await c.get_state()).is_streaming
            await c.abort()  # now stopped on purpose
            assert await _cancelled(server, 0) < 2
            await c.wait_for_idle()
            with pytest.raises(ClientTimeout):
                await c.run("hang", timeout=1, abort_on_exit=False)
            await asyncio.sleep(0.5)
            assert server.cancelled == [0] and (await c.get_state()).is_streaming
            await c.abort()
            assert await _cancelled(server, 1) < 2
