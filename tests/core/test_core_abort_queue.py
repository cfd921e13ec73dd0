"""abort keeps the queue: queued messages are delivered after the aborted run, also when the
abort lands in an auto-retry delay."""

from __future__ import annotations

import asyncio

from atomic_host.testing import start_host

OVERLOADED = {"content": [], "stopReason": "error", "errorMessage": "529 overloaded_error"}


async def test_abort_in_retry_delay_returns_promptly_then_delivers_queue() -> None:
    settings = {"retry": {"enabled": True, "maxRetries": 3, "baseDelayMs": 5000}}
    async with start_host(settings=settings) as host:
        c = host.client
        host.faux.push(OVERLOADED, "answer to the follow-up")
        n0 = len(c.events)
        await c.prompt("first")
        await c.wait_for_event("auto_retry_start", after=n0)
        await c.follow_up("then this")
        loop = asyncio.get_running_loop()
        started = loop.time()
        await c.abort()
        assert loop.time() - started < 2.0  # not held by the 5 s delay nor by the follow-up's run
        end = await c.wait_for_event("auto_retry_end", after=n0)
        assert end["finalError"] == "Retry cancelled"
        # The queued follow-up runs after the abort, in a new run.
        n1 = len(c.events)
        await c.wait_for_event(
            lambda e: e["type"] == "message_end" and e["message"]["role"] == "assistant", after=n1, timeout=10
        )
        await c.wait_for_idle(after=n1)
        assert await c.get_last_assistant_text() == "answer to the follow-up"
        assert (await c.get_state())["pendingMessageCount"] == 0
