"""Events built on the per-delta path keep their shape: ``AssistantStream``'s deltas are the dicts
``_ev`` makes (same keys, same order), the agent loop's ``message_update`` carries the provider
event without its partial message (keys in their order), and the pool drains a connection only
when draining would wait or fail."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from atomic_host.agent.loop import _UpdateEmitter
from atomic_host.kit._fast.http1 import _Conn
from atomic_host.kit.llm.stream import AssistantStream

MODEL = {"id": "m1", "api": "openai-completions", "provider": "local"}


def test_deltas_are_the_events_ev_makes() -> None:
    out = AssistantStream(MODEL)
    text, _ = out.text_start()
    thinking, _ = out.thinking_start()
    event = out.text_delta(text, "a")
    assert list(event.items()) == list(out._ev("text_delta", contentIndex=text, delta="a").items())
    assert event["partial"] is out.message and out.content[text]["text"] == "a"
    event = out.thinking_delta(thinking, "b")
    assert list(event.items()) == list(out._ev("thinking_delta", contentIndex=thinking, delta="b").items())
    assert out.content[thinking]["thinking"] == "b"


def test_message_update_carries_the_event_without_its_partial_in_order() -> None:
    sent: list[tuple[dict[str, Any], str | None]] = []
    emitter = _UpdateEmitter(lambda update, line=None: sent.append((update, line)))
    partial = {"usage": {"input": 1, "output": 2}}
    emitter.send({"type": "text_delta", "partial": partial, "contentIndex": 0, "delta": "x", "extra": [1]})
    update, line = sent[0]
    assert list(update["assistantMessageEvent"].items()) == [
        ("type", "text_delta"), ("contentIndex", 0), ("delta", "x"), ("extra", [1])
    ]  # fmt: skip
    assert line is not None and '"assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"x"' in line


async def test_a_connection_is_drained_only_when_draining_would_wait_or_fail() -> None:
    conn = _Conn()
    assert not conn.must_drain()
    conn.pause_writing()
    assert conn.must_drain()
    waiter = asyncio.ensure_future(conn.drain())
    await asyncio.sleep(0)
    assert not waiter.done()
    conn.resume_writing()
    await waiter
    assert not conn.must_drain()
    conn.connection_lost(ConnectionResetError("reset"))
    assert conn.must_drain()


@settings(max_examples=200)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["input", "output", "cacheRead", "cacheWrite", "totalTokens", "reasoning", "x"]),
                  st.integers(0, 5)),
        max_size=12,
    )
)  # fmt: skip
def test_every_message_update_carries_the_usage_as_it_is_then(steps: list[tuple[str, int]]) -> None:
    """The usage dict is updated in place between deltas (any field: reasoning tokens alone, too):
    each update's line carries it as it is at that delta, though its encoding is reused."""
    sent: list[tuple[dict[str, Any], str | None]] = []
    emitter = _UpdateEmitter(lambda update, line=None: sent.append((update, line)))
    usage: dict[str, Any] = {"input": 0, "output": 0, "cost": {"total": 0.0}}
    partial = {"usage": usage}
    for field, value in [("output", 0), *steps]:
        usage[field] = value
        emitter.send({"type": "text_delta", "partial": partial, "contentIndex": 0, "delta": "x"})
        _update, line = sent[-1]
        assert line is not None and json.loads(line)["usage"] == usage
