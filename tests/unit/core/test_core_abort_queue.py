"""abort keeps the queue and holds it: queued messages are not delivered after the aborted run,
also when the abort lands in an auto-retry delay; the next prompt delivers them (semantics §3.4)."""

from __future__ import annotations

import asyncio

from atomic_host.testing import start_host

OVERLOADED = {"content": [], "stopReason": "error", "errorMessage": "529 overloaded_error"}


async def test_abort_in_retry_delay_returns_promptly_and_holds_queue() -> None:
    settings = {"retry": {"enabled": True, "maxRetries": 3, "baseDelayMs": 5000}}
    async with start_host(settings=settings) as host:
        c = host.client
        host.faux.push(OVERLOADED, "answer to the prompt", "answer to the follow-up")
        n0 = len(c.events)
        await c.prompt("first")
        await c.wait_for_event("auto_retry_start", after=n0)
        await c.follow_up("then this")
        loop = asyncio.get_running_loop()
        started = loop.time()
        await c.abort()
        assert loop.time() - started < 2.0  # not held by the 5 s delay
        end = await c.wait_for_event("auto_retry_end", after=n0)
        assert end["finalError"] == "Retry cancelled"
        # The follow-up stays queued: no new run starts by itself.
        await asyncio.sleep(0.3)
        state = await c.get_state()
        assert state["pendingMessageCount"] == 1 and not state["isStreaming"]
        assert [e["type"] for e in c.events[n0:]].count("agent_start") == 1
        assert len(host.faux_calls()) == 1
        # The next prompt runs first; the follow-up comes when the loop would otherwise stop.
        n1 = len(c.events)
        await c.prompt("second")
        await c.wait_for_idle(after=n1)
        users = [
            e["message"]["content"][0]["text"]
            for e in c.events[n1:]
            if e["type"] == "message_start" and e["message"]["role"] == "user"
        ]
        assert users == ["second", "then this"]
        assert [e["type"] for e in c.events[n1:]].count("agent_start") == 1
        assert (await c.get_last_assistant_text()).text == "answer to the follow-up"
        assert (await c.get_state())["pendingMessageCount"] == 0
