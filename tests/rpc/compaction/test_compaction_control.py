"""Hooks, abort_compaction, joined requests, isCompacting and summarization retries."""

from __future__ import annotations

import asyncio
import time

from compaction_helpers import file_entries, of_type, seed, session_file

from atomic_host.testing import start_host

EXTENSION = '''
from pathlib import Path
from atomic_host import Cancel, CompactResult, hookimpl

MODE = Path(__file__).with_suffix(".mode")


@hookimpl
def session_before_compact(event, api):
    mode = MODE.read_text() if MODE.exists() else ""
    if mode == "cancel":
        return Cancel()
    if mode == "supply":
        return CompactResult("[User]: summary by hook, reason=" + event.reason)
    return None
'''


async def test_hook_cancels_or_supplies_text(tmp_path) -> None:
    ext = tmp_path / "compact_ext.py"
    ext.write_text(EXTENSION)
    mode = ext.with_suffix(".mode")
    async with start_host("--extension", str(ext)) as host:
        c = host.client
        await seed(host)

        mode.write_text("cancel")
        start = len(c.events)
        response = await c.request({"type": "compact"})
        assert (response["success"], response["error"]) == (False, "Compaction cancelled")
        [end] = of_type(c.events[start:], "compaction_end")
        assert end["aborted"] is True and end["result"] is None and "errorMessage" not in end

        mode.write_text("supply")
        calls_before = len(host.faux_calls())
        result = await c.call("compact")
        assert len(host.faux_calls()) == calls_before  # the model was not asked
        assert result["rung"] == "extension"
        assert result["compactedText"] == "[User]: summary by hook, reason=manual"
        assert result["stats"]["rangeCount"] == 0
        entry = file_entries(session_file(host))[-1]
        assert entry["type"] == "compaction" and entry["fromHook"] is True
        assert entry["details"]["rung"] == "extension"
        messages = (await c.get_messages()).messages
        assert "summary by hook" in messages[0]["content"][0]["text"]
        host.assert_protocol_lines()


async def test_compact_holds_the_ordinary_lane_and_abort_compaction_answers_at_once() -> None:
    """semantics §1: ``compact`` holds the ordinary lane (a get_state sent during it waits), while
    ``abort_compaction`` runs on the concurrent lane and answers at once."""
    async with start_host() as host:
        c = host.client
        await seed(host)
        host.faux.push({"content": "1,5", "delayMs": 20000})
        start = len(c.events)
        first = asyncio.create_task(c.request({"type": "compact"}))
        await c.wait_for_event("compaction_start", after=start)
        state = asyncio.create_task(c.get_state())
        await asyncio.sleep(0.3)
        assert not state.done(), "get_state overtook the compact that holds the lane"
        t0 = time.monotonic()
        await c.call("abort_compaction")
        assert time.monotonic() - t0 < 1.0
        response = await first
        assert (response["success"], response["error"]) == (False, "Compaction cancelled")
        assert (await state)["isCompacting"] is False
        [end] = of_type(c.events[start:], "compaction_end")
        assert end == {"type": "compaction_end", "reason": "manual", "result": None, "aborted": True,
                       "willRetry": False}
        assert not [e for e in file_entries(session_file(host)) if e["type"] == "compaction"]
        await c.call("abort_compaction")  # nothing running: a no-op

        # two compacts back to back run one after the other: two event pairs, never overlapping
        host.faux.push({"content": "1,5", "delayMs": 300}, {"stopReason": "error", "errorMessage": "planner down"})
        start = len(c.events)
        results = await asyncio.gather(c.request({"type": "compact"}), c.request({"type": "compact"}))
        assert results[0]["success"] is True
        assert results[1]["error"] == "Compaction failed: planner down"
        kinds = [e["type"] for e in c.events[start:] if e["type"].startswith("compaction_")]
        assert kinds == ["compaction_start", "compaction_end", "compaction_start", "compaction_end"]
        assert len([e for e in file_entries(session_file(host)) if e["type"] == "compaction"]) == 1
        host.assert_protocol_lines()


async def test_compact_aborts_the_active_run() -> None:
    async with start_host() as host:
        c = host.client
        await seed(host)
        host.faux.push({"content": "a long reply " * 50, "chunkDelayMs": 50})
        start = len(c.events)
        await c.prompt("keep going")
        await c.wait_for_event("message_update", after=start)
        host.faux.push("1,5")
        result = await c.call("compact")
        assert result["rung"] == "planned"
        events = c.events[start:]
        kinds = [e["type"] for e in events]
        assert kinds.index("agent_end") < kinds.index("compaction_start")
        [reply] = [e["message"] for e in of_type(events, "message_end") if e["message"]["role"] == "assistant"]
        assert reply["stopReason"] == "aborted"
        host.assert_protocol_lines()


async def test_summarization_retry_events() -> None:
    async with start_host(settings={"retry": {"baseDelayMs": 1}}) as host:
        c = host.client
        await seed(host)
        host.faux.push({"stopReason": "error", "errorMessage": "529 overloaded_error: Overloaded"}, "1,5")
        start = len(c.events)
        result = await c.call("compact")
        assert result["rung"] == "planned"
        events = [e for e in c.events[start:] if e["type"].startswith(("summarization", "compaction"))]
        assert events[1:4] == [
            {"type": "summarization_retry_scheduled", "attempt": 1, "maxAttempts": 3, "delayMs": 1,
             "errorMessage": "529 overloaded_error: Overloaded"},
            {"type": "summarization_retry_attempt_start", "source": "compaction", "reason": "manual"},
            {"type": "summarization_retry_finished"},
        ]
        assert [e["type"] for e in (events[0], events[4])] == ["compaction_start", "compaction_end"]
        host.assert_protocol_lines()
