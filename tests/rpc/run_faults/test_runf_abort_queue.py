"""abort and the queues (semantics §3.3/§3.4): after an abort, queued messages stay queued, and
listed, until the next prompt; that prompt's message comes first, then the steering queue (polled at
run start), then follow-ups once the loop would otherwise stop."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from agent_helpers import bash_call, of_type
from runf_helpers import sequence, session_records, user_texts

from atomic_host.testing import start_host

OVERLOADED = {"content": [], "stopReason": "error", "errorMessage": "529 overloaded_error"}


async def _abort_mid_tool(host: Any) -> int:
    """Run a prompt whose bash tool sleeps; queue s1 (steer) and f1 (follow-up); abort."""
    c = host.client
    n0 = len(c.events)
    await c.prompt("work")
    await c.wait_for_event("tool_execution_start", after=n0)
    await c.steer("s1")
    await c.follow_up("f1")
    await c.abort()
    return n0


async def test_abort_holds_queue_and_idle_steer_stays_queued() -> None:
    async with start_host() as host:
        c = host.client
        host.faux.push({"content": [bash_call("sleep 10")]}, "r1", "r2", "r3")
        n0 = await _abort_mid_tool(host)
        await asyncio.sleep(0.5)  # time for a (wrong) automatic run to show up
        assert [e["type"] for e in c.events[n0:]].count("agent_start") == 1
        state = await c.get_state()
        assert state["pendingMessageCount"] == 2 and not state["isStreaming"]
        # steer / follow_up right after the abort, while idle: queued, listed, nothing runs.
        n1 = len(c.events)
        assert (await c.steer("s2"))["disposition"] == "queued"
        assert (await c.follow_up("f2"))["disposition"] == "queued"
        await asyncio.sleep(0.3)
        assert [(e["steering"], e["followUp"]) for e in of_type(c.events[n1:], "queue_update")] == [
            (["s1", "s2"], ["f1"]),
            (["s1", "s2"], ["f1", "f2"]),
        ]
        assert not [e for e in c.events[n1:] if e["type"] != "queue_update"]
        assert (await c.get_state())["pendingMessageCount"] == 4
        assert len(host.faux_calls()) == 1
        # The next prompt delivers everything, in one run: p with s1, then s2, then f1, then f2.
        host.faux.push("r4")
        n2 = len(c.events)
        await c.prompt("p")
        await c.wait_for_idle(after=n2)
        events = c.events[n2:]
        assert user_texts(events) == ["p", "s1", "s2", "f1", "f2"]
        assert sequence(events) == [
            "agent_start", "turn_start",
            "message_start:user:p", "message_end:user:p", "message_start:user:s1", "message_end:user:s1",
            "message_start:assistant", "message_end:assistant", "turn_end",
            "turn_start", "message_start:user:s2", "message_end:user:s2",
            "message_start:assistant", "message_end:assistant", "turn_end",
            "turn_start", "message_start:user:f1", "message_end:user:f1",
            "message_start:assistant", "message_end:assistant", "turn_end",
            "turn_start", "message_start:user:f2", "message_end:user:f2",
            "message_start:assistant", "message_end:assistant", "turn_end",
            "agent_end", "agent_settled",
        ]  # fmt: skip
        assert [(e["steering"], e["followUp"]) for e in of_type(events, "queue_update")] == [
            (["s2"], ["f1", "f2"]), ([], ["f1", "f2"]), ([], ["f2"]), ([], []),
        ]  # fmt: skip
        # The model saw p and s1 together in its first call of the run.
        first_call = host.faux_calls()[1]["context"]["messages"]
        assert [m["role"] for m in first_call][-2:] == ["user", "user"]
        assert (await c.get_state())["pendingMessageCount"] == 0
        assert (await session_records(host)) == [
            "user:work", "assistant:", "toolResult:bash",
            "user:p", "user:s1", "assistant:r1", "user:s2", "assistant:r2",
            "user:f1", "assistant:r3", "user:f2", "assistant:r4",
        ]  # fmt: skip
        host.assert_protocol_lines()


async def test_all_mode_delivers_held_steering_with_the_prompt_in_one_call() -> None:
    async with start_host(settings={"steeringMode": "all"}) as host:
        c = host.client
        host.faux.push({"content": [bash_call("sleep 10")]}, "both at once", "then the follow-up")
        n0 = await _abort_mid_tool(host)
        assert (await c.steer("s2"))["disposition"] == "queued"
        n1 = len(c.events)
        await c.prompt("p")
        await c.wait_for_idle(after=n1)
        events = c.events[n1:]
        assert user_texts(events) == ["p", "s1", "s2", "f1"]
        assert [e["type"] for e in events].count("turn_start") == 2
        calls = host.faux_calls()
        assert len(calls) == 3
        assert [m["role"] for m in calls[1]["context"]["messages"]][-4:] == ["toolResult", "user", "user", "user"]
        assert [e["type"] for e in c.events[n0:]].count("agent_start") == 2


async def test_clear_queue_after_abort_then_prompt_delivers_only_the_prompt() -> None:
    async with start_host() as host:
        c = host.client
        host.faux.push({"content": [bash_call("sleep 10")]}, "only p")
        await _abort_mid_tool(host)
        assert await c.clear_queue() == {"steering": ["s1"], "followUp": ["f1"]}
        n1 = len(c.events)
        await c.prompt("p")
        await c.wait_for_idle(after=n1)
        assert user_texts(c.events[n1:]) == ["p"]
        assert (await c.get_state())["pendingMessageCount"] == 0


async def test_abort_in_retry_delay_holds_steering_until_the_next_prompt() -> None:
    settings = {"retry": {"enabled": True, "maxRetries": 3, "baseDelayMs": 5000}}
    async with start_host(settings=settings) as host:
        c = host.client
        host.faux.push(OVERLOADED, "answer")
        n0 = len(c.events)
        await c.prompt("first")
        await c.wait_for_event("auto_retry_start", after=n0)
        await c.steer("s1")
        t0 = time.monotonic()
        await c.abort()
        assert time.monotonic() - t0 < 2
        assert (await c.wait_for_event("auto_retry_end", after=n0))["finalError"] == "Retry cancelled"
        await asyncio.sleep(0.4)
        state = await c.get_state()
        assert state["pendingMessageCount"] == 1 and not state["isStreaming"]
        assert len(host.faux_calls()) == 1 and [e["type"] for e in c.events[n0:]].count("agent_start") == 1
        n1 = len(c.events)
        await c.prompt("second")
        await c.wait_for_idle(after=n1)
        assert user_texts(c.events[n1:]) == ["second", "s1"]
        assert (await c.get_last_assistant_text()).text == "answer"


async def test_steer_on_idle_session_without_abort_still_starts_a_turn() -> None:
    """The hold is only for aborts: a steer sent to an idle session with messages runs at once."""
    async with start_host() as host:
        c = host.client
        host.faux.push({"content": [bash_call("sleep 10")]}, "r1", "r2")
        await _abort_mid_tool(host)
        await c.clear_queue()
        await c.prompt_and_wait("p")  # this prompt ends the hold
        n1 = len(c.events)
        assert (await c.steer("nudge"))["disposition"] == "queued"
        await c.wait_for_idle(after=n1)
        assert user_texts(c.events[n1:]) == ["nudge"]
        assert (await c.get_last_assistant_text()).text == "r2"
