"""A ``length`` stop is a context overflow only when the context really is full (semantics §4.6).

The model has a 10,000-token window and an 8,000-token output limit. The host leaves 4,096 tokens
of the window for a reply, so "full" means prompt + output near 10,000 − 4,096 = 5,904.
"""

from __future__ import annotations

from typing import Any

import pytest
from vendor_helpers import FAST_RETRY, assistants, of_type, stream_reply, text_of

SMALL_MODEL = {"contextWindow": 10000, "maxTokens": 8000}
SETTINGS = {**FAST_RETRY, "compaction": {"reserveTokens": 1000}}  # threshold compaction only above 9,000


@pytest.mark.parametrize(
    ("api", "fixture"),
    [
        ("openai-completions", "openai_chat/length_far_below_window.sse"),  # 79 in + 1 out
        ("openai-responses", "openai_responses/incomplete_far_below_window.sse"),  # usage all zeros
    ],
)
async def test_length_stop_far_below_the_window_is_a_truncated_reply(
    vendor_host: Any, sse_server: Any, api: str, fixture: str
) -> None:
    sse_server.enqueue(stream_reply(fixture))
    async with vendor_host(api, model=SMALL_MODEL, settings=SETTINGS) as host:
        events = await host.client.prompt_and_wait("answer in JSON")
        (reply,) = assistants(events)
        assert reply["stopReason"] == "length"
        assert of_type(events, "compaction_start") == [] and of_type(events, "auto_retry_start") == []
        assert len(sse_server.requests) == 1
        state = await host.client.get_state()
        assert state["isCompacting"] is False


async def test_length_stop_with_a_full_context_compacts_and_retries(vendor_host: Any, sse_server: Any) -> None:
    # 5,200 prompt + 700 output tokens: the reply used up the room the window had left.
    sse_server.enqueue(stream_reply("openai_chat/length_context_full.sse"))
    sse_server.enqueue(stream_reply("openai_chat/answer.sse"))
    async with vendor_host("openai-completions", model=SMALL_MODEL, settings=SETTINGS) as host:
        events = await host.client.prompt_and_wait("summarise everything")
        first, last = assistants(events)
        assert first["stopReason"] == "length" and first["usage"]["input"] == 5200
        assert [e["reason"] for e in of_type(events, "compaction_start")] == ["overflow"]
        assert of_type(events, "compaction_end")[0]["willRetry"] is True
        assert text_of(last) == "All done." and len(sse_server.requests) == 2


async def test_length_stop_at_the_models_own_output_limit_is_not_an_overflow(
    vendor_host: Any, sse_server: Any
) -> None:
    # The same full-looking usage, but the output (700) reached the model's maxTokens (700).
    sse_server.enqueue(stream_reply("openai_chat/length_context_full.sse"))
    model = {"contextWindow": 10000, "maxTokens": 700}
    async with vendor_host("openai-completions", model=model, settings=SETTINGS) as host:
        events = await host.client.prompt_and_wait("summarise everything")
        assert assistants(events)[0]["stopReason"] == "length"
        assert of_type(events, "compaction_start") == [] and len(sse_server.requests) == 1
