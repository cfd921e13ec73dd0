"""Built-in tools never block the event loop: while a big search or walk runs, ``get_state``
answers at once, and ``abort`` answers promptly and really stops the work (issue 8)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from offloop_helpers import get_state_latencies, host_pid, proc_children, proc_cpu_seconds, timed

pytestmark = pytest.mark.slow  # big searches and walks, timed against the loop

STATE_BOUND = 0.5  # seconds: generous for a loaded 2-core CI machine; the old code took the whole search
ABORT_BOUND = 2.0


async def _start_tool(host, name: str, arguments: dict) -> int:
    """Prompt so that the faux model calls ``name``; return the event index of its start."""
    host.faux.tool_call(name, arguments, call_id="call-1")
    host.faux.text("done")
    start = len(host.client.events)
    await host.client.prompt("go")
    await host.client.wait_for_event("tool_execution_start", after=start, timeout=30)
    return start


async def test_get_state_answers_during_a_big_search(offloop_host, big_tree: Path) -> None:
    async with offloop_host(cwd=big_tree) as host:
        start = await _start_tool(host, "search", {"pattern": "NEEDLE"})
        latencies = await get_state_latencies(host.client, duration=0.6)
        end = await host.client.wait_for_event("tool_execution_end", after=start, timeout=120)
        await host.client.wait_for_idle(after=start)
    assert latencies and max(latencies) < STATE_BOUND, latencies
    assert end["isError"] is False
    assert "No matches for 'NEEDLE'" in end["result"]["content"][0]["text"]


async def test_abort_kills_the_search_worker(offloop_host, big_tree: Path) -> None:
    async with offloop_host(cwd=big_tree) as host:
        pid = host_pid(host.client)
        start = await _start_tool(host, "search", {"pattern": "NEEDLE"})
        await asyncio.sleep(0.2)
        assert proc_children(pid), "the search should run in a worker process"
        _, took = await timed(host.client.abort())
        end = await host.client.wait_for_event("tool_execution_end", after=start, timeout=10)
        # the worker process is gone (killed), not left to finish in the background
        deadline = time.monotonic() + 5
        while proc_children(pid) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert not proc_children(pid)
        state = await host.client.get_state()
    assert took < ABORT_BOUND, took
    assert end["isError"] is True and "aborted" in end["result"]["content"][0]["text"].lower()
    assert state["isStreaming"] is False


async def test_abort_stops_a_catastrophic_regex(offloop_host, tmp_path: Path) -> None:
    """``re`` holds the GIL for a whole match: only a killable process stops (a+)+$ on a long line."""
    work = tmp_path / "regex"
    work.mkdir()
    (work / "evil.txt").write_text("a" * 40 + "!\n")
    async with offloop_host(cwd=work) as host:
        start = await _start_tool(host, "search", {"pattern": "(a+)+$"})
        latencies = await get_state_latencies(host.client, duration=0.4)
        _, took = await timed(host.client.abort())
        end = await host.client.wait_for_event("tool_execution_end", after=start, timeout=10)
    assert max(latencies) < STATE_BOUND, latencies
    assert took < ABORT_BOUND
    assert end["isError"] is True


async def test_find_walk_runs_in_a_thread_that_stops_on_abort(offloop_host, wide_tree: Path) -> None:
    async with offloop_host(cwd=wide_tree) as host:
        pid = host_pid(host.client)
        start = await _start_tool(host, "find", {"pattern": "*.nomatch", "timeout": 60})
        latencies = await get_state_latencies(host.client, duration=0.4)
        _, took = await timed(host.client.abort())
        end = await host.client.wait_for_event("tool_execution_end", after=start, timeout=10)
        # once stopped, the host burns no more CPU: the walk really ended
        await asyncio.sleep(0.3)
        cpu_before = proc_cpu_seconds(pid)
        await asyncio.sleep(1.0)
        cpu_used = proc_cpu_seconds(pid) - cpu_before
    assert max(latencies) < STATE_BOUND, latencies
    assert took < ABORT_BOUND
    assert end["isError"] is True
    assert cpu_used < 0.3, f"the walk kept running after abort: {cpu_used:.2f} s CPU in 1 s"
