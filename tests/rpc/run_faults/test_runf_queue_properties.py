"""Property and scale tests for the queues: random mixes of queued user and custom messages, with
hostile text, with or without an abort, each delivered exactly once and in the documented order;
and delivery cost that grows linearly with the queue."""

from __future__ import annotations

import asyncio
import json
import time

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from runf_helpers import delivered, ext, gate_call, session_records

from atomic_host.testing import start_host

KINDS = ("steer", "follow_up", "custom_steer", "custom_follow_up", "next_turn")
hostile_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40
)  # any code point but surrogates: quotes, newlines, U+2028, NUL, RTL marks, emoji…
plans = st.lists(st.tuples(st.sampled_from(KINDS), hostile_text), min_size=1, max_size=8)


def _send(content: str, deliver_as: str) -> str:
    return "/runf_send " + json.dumps({"content": content, "deliver_as": deliver_as})


async def _scenario(plan: list[tuple[str, str]], abort: bool, mode: str) -> None:
    async with start_host("-e", ext("runf_sender"), settings={"steeringMode": mode, "followUpMode": mode}) as host:
        c = host.client
        host.faux.push(gate_call(), *(["ok"] * 30))
        n0 = len(c.events)
        await c.prompt("go")
        await c.wait_for_event("tool_execution_start", after=n0)
        steers, follow_ups, next_turns = [], [], []
        listed = 0
        for i, (kind, raw) in enumerate(plan):
            text = f"{i}:{raw}"
            if kind == "steer":
                await c.steer(text)
                steers.append(f"user:{text}")
                listed += 1
            elif kind == "follow_up":
                await c.follow_up(text)
                follow_ups.append(f"user:{text}")
                listed += 1
            else:
                deliver_as = {"custom_steer": "steer", "custom_follow_up": "followUp", "next_turn": "nextTurn"}[kind]
                assert (await c.call("prompt", message=_send(text, deliver_as)))["disposition"] == "handled"
                {"steer": steers, "followUp": follow_ups, "nextTurn": next_turns}[deliver_as].append(f"custom:{text}")
            assert (await c.get_state())["pendingMessageCount"] == listed
        if abort:
            await c.abort()
        else:
            assert (await c.call("prompt", message="/runf_release"))["disposition"] == "handled"
        await c.wait_for_idle(after=n0)
        first = delivered(c.events[n0:])
        n1 = len(c.events)
        await c.prompt("end")
        await c.wait_for_idle(after=n1)
        await asyncio.sleep(0.1)
        second = delivered(c.events[n1:])
        if abort:  # held: everything comes with the next prompt, after its own message
            assert first == ["user:go"]
            assert second == ["user:end", *next_turns, *steers, *follow_ups]
        else:
            assert first == ["user:go", *steers, *follow_ups]
            assert second == ["user:end", *next_turns]
        records = await session_records(host)
        for label in (*steers, *follow_ups, *next_turns):
            assert records.count(label) == 1, label
        state = await c.get_state()
        assert state["pendingMessageCount"] == 0 and not state["isStreaming"]
        assert [e for e in c.events if e["type"] == "extension_error"] == []
        host.assert_protocol_lines()


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=plans, abort=st.booleans(), mode=st.sampled_from(["one-at-a-time", "all"]))
@example(plan=[("steer", "\x85"), ("follow_up", "a\u2028b\u2029c\x1c\x1d\x1e")], abort=False, mode="all")
def test_every_queued_message_is_delivered_once_in_order(plan: list[tuple[str, str]], abort: bool, mode: str) -> None:
    asyncio.run(_scenario(plan, abort, mode))


async def _deliver(n: int) -> tuple[float, int]:
    """Queue ``n`` steers and ``n`` custom steers at the gate, release, time until idle."""
    async with start_host("-e", ext("runf_sender"), settings={"steeringMode": "all"}) as host:
        c = host.client
        host.faux.push(gate_call(), "all of them")
        n0 = len(c.events)
        await c.prompt("go")
        await c.wait_for_event("tool_execution_start", after=n0)
        for i in range(n):
            await c.steer(f"s{i}")
            await c.call("prompt", message=_send(f"c{i}", "steer"))
        n1 = len(c.events)
        t0 = time.monotonic()
        await c.call("prompt", message="/runf_release")
        await c.wait_for_idle(after=n1, timeout=120)
        took = time.monotonic() - t0
        got = delivered(c.events[n1:])
        assert got == [x for i in range(n) for x in (f"user:s{i}", f"custom:c{i}")]
        assert len(host.faux_calls()) == 2  # "all": one model call for the whole queue
        updates = [e for e in c.events[n1:] if e["type"] == "queue_update"]
        assert len(updates) == n  # one per listed (user) message taken off, none for custom ones
        return took, len(c.events) - n1


async def test_delivering_a_queue_costs_linear_time() -> None:
    small, small_events = await _deliver(20)
    large, large_events = await _deliver(200)
    assert large_events < 12 * small_events  # the event count is linear: 10x the queue
    assert large < 40 * small + 0.5, (small, large)  # generous: quadratic work would be ~100x
