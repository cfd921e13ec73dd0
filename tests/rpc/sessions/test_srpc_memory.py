"""A session the client leaves is freed at once, by reference counting: no reference cycle through
the session engine (its queues, its retry state, …) keeps it, and with it its parsed file, until
the next full collection (20-40 MB more at 2,000 turns, each time such a cycle crept in)."""

from __future__ import annotations

from pathlib import Path

from atomic_host.testing import start_host

PROBE = str(Path(__file__).with_name("srpc_gc_probe.py"))


async def _probe(c, arg: str) -> str:
    n0 = len(c.events)
    await c.call("prompt", message=f"/srpc_gc {arg}")
    event = await c.wait_for_event(
        lambda e: e.get("method") == "notify" and str(e.get("message", "")).startswith("srpc_gc:"), after=n0
    )
    return event["message"].removeprefix("srpc_gc: ")


async def test_a_session_left_behind_is_freed_without_the_cyclic_collector() -> None:
    async with start_host("-e", PROBE) as host:
        c = host.client
        host.faux.push("first reply", "second reply")
        await c.prompt_and_wait("hello")  # a session with a run, retries and queues behind it
        first = (await c.get_state())["sessionId"]
        assert await _probe(c, "off") == "off"
        await c.call("new_session")
        await c.prompt_and_wait("again")
        await c.call("switch_session", sessionId=first)
        await c.call("new_session")
        assert await _probe(c, "count") == "1"
