"""Auto-retry waits as long as the server asked (``retry-after`` / ``retry-after-ms``), capped by
``retry.provider.maxRetryDelayMs``, and reports that delay in ``auto_retry_start.delayMs``."""

from __future__ import annotations

import time
from typing import Any

import pytest
from vendor_helpers import FAST_RETRY, assistants, error_reply, of_type, stream_reply, text_of

pytestmark = pytest.mark.slow  # waits out the retry delays


async def _retry_once(host: Any, sse_server: Any) -> tuple[list[dict[str, Any]], float]:
    """Prompt; return the events and the seconds from ``auto_retry_start`` to the next assistant."""
    stamps: list[tuple[float, dict[str, Any]]] = []
    host.client.on_event(lambda e: stamps.append((time.monotonic(), e)))
    events = await host.client.prompt_and_wait("hi")
    started = next(t for t, e in stamps if e["type"] == "auto_retry_start")
    resumed = next(
        t for t, e in stamps
        if t >= started and e["type"] == "message_start" and e["message"]["role"] == "assistant"
    )
    return events, resumed - started


@pytest.mark.parametrize(
    ("api", "status", "fixture", "answer", "headers", "expected_ms"),
    [
        ("anthropic-messages", 429, "anthropic/http_429_rate_limit.json", "anthropic/answer.sse",
         {"retry-after": "1"}, 1000),
        ("openai-completions", 429, "openai_chat/http_429_rate_limit_exceeded.json", "openai_chat/answer.sse",
         {"retry-after-ms": "700", "retry-after": "9"}, 700),  # the millisecond header wins
        ("anthropic-messages", 529, "anthropic/http_529_overloaded.json", "anthropic/answer.sse",
         {"retry-after": "0.6"}, 600),
    ],
)
async def test_server_requested_delay_is_honoured(
    vendor_host: Any, sse_server: Any, api: str, status: int, fixture: str, answer: str,
    headers: dict[str, str], expected_ms: int,
) -> None:
    sse_server.enqueue(error_reply(status, fixture, headers))
    sse_server.enqueue(stream_reply(answer))
    async with vendor_host(api) as host:  # baseDelayMs 50: without the header the wait would be 50 ms
        events, waited = await _retry_once(host, sse_server)
        (start,) = of_type(events, "auto_retry_start")
        assert start["delayMs"] == expected_ms
        assert waited >= expected_ms / 1000 * 0.9
        failed, good = assistants(events)
        assert failed["retryAfterMs"] == expected_ms and text_of(good) == "All done."


async def test_server_requested_delay_is_capped_by_max_retry_delay(vendor_host: Any, sse_server: Any) -> None:
    sse_server.enqueue(error_reply(429, "anthropic/http_429_rate_limit.json", {"retry-after": "30"}))
    sse_server.enqueue(stream_reply("anthropic/answer.sse"))
    settings = {**FAST_RETRY, "retry": {**FAST_RETRY["retry"], "provider": {"maxRetryDelayMs": 400}}}
    async with vendor_host("anthropic-messages", settings=settings) as host:
        events, waited = await _retry_once(host, sse_server)
        (start,) = of_type(events, "auto_retry_start")
        assert start["delayMs"] == 400 and 0.35 <= waited < 10
        assert assistants(events)[0]["retryAfterMs"] == 30000  # what the server asked, for clients to see


async def test_a_shorter_server_delay_does_not_shorten_the_backoff(vendor_host: Any, sse_server: Any) -> None:
    sse_server.enqueue(error_reply(429, "anthropic/http_429_rate_limit.json", {"retry-after-ms": "5"}))
    sse_server.enqueue(stream_reply("anthropic/answer.sse"))
    settings = {**FAST_RETRY, "retry": {**FAST_RETRY["retry"], "baseDelayMs": 300}}
    async with vendor_host("anthropic-messages", settings=settings) as host:
        events, waited = await _retry_once(host, sse_server)
        assert of_type(events, "auto_retry_start")[0]["delayMs"] == 300 and waited >= 0.27


async def test_without_a_header_the_backoff_is_unchanged(vendor_host: Any, sse_server: Any) -> None:
    sse_server.enqueue(error_reply(529, "anthropic/http_529_overloaded.json"))
    sse_server.enqueue(error_reply(529, "anthropic/http_529_overloaded.json"))
    sse_server.enqueue(stream_reply("anthropic/answer.sse"))
    async with vendor_host("anthropic-messages") as host:
        events = await host.client.prompt_and_wait("hi")
        assert [e["delayMs"] for e in of_type(events, "auto_retry_start")] == [50, 100]
        assert all("retryAfterMs" not in m for m in assistants(events))
