"""Property-based and scale tests for the parsing behind the conformance fixes.

Hostile input for the header, error-object and proxy parsers; the adapters fed the fixtures in
arbitrary pieces (same message whatever the split) and with garbage frames mixed in (exactly one
terminal event, never an exception); cost that stays linear at ×10 / ×100 the usual size.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import time
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vendor_helpers import fixture, sse

from atomic_host.contract.providers import StreamOptions
from atomic_host.kit.llm.errors import is_length_overflow, session_retry_delay_ms
from atomic_host.kit.llm.http import retry_after_ms
from atomic_host.kit.llm.http_client import new_http_client, proxy_routes, redact_url
from atomic_host.kit.llm.stream import AssistantStream
from atomic_host.kit.llm.wire_errors import error_object_text
from builtin_plugins.providers import anthropic, openai_completions, openai_responses

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


# --- small parsers -------------------------------------------------------------------------------


@given(ms=st.one_of(st.none(), st.text(max_size=30)), after=st.one_of(st.none(), st.text(max_size=40)))
def test_retry_after_never_raises_and_is_never_negative(ms: str | None, after: str | None) -> None:
    headers = {k: v for k, v in (("retry-after-ms", ms), ("retry-after", after)) if v is not None}
    value = retry_after_ms(headers)
    assert value is None or (isinstance(value, int) and value >= 0)


@given(seconds=st.integers(min_value=0, max_value=10**6), ms=st.integers(min_value=0, max_value=10**9))
def test_retry_after_numbers_and_the_ms_header_wins(seconds: int, ms: int) -> None:
    assert retry_after_ms({"retry-after": str(seconds)}) == seconds * 1000
    assert retry_after_ms({"retry-after": f"{seconds}.5"}) == seconds * 1000 + 500
    assert retry_after_ms({"retry-after-ms": str(ms), "retry-after": str(seconds)}) == ms


def test_retry_after_http_date() -> None:
    soon = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25_000 <= retry_after_ms({"retry-after": soon}) <= 31_000  # type: ignore[operator]
    past = email.utils.formatdate(time.time() - 3600, usegmt=True)
    assert retry_after_ms({"retry-after": past}) == 0
    assert retry_after_ms({"retry-after": "Wed, 99 Foo 2000 99:99:99 GMT"}) is None
    assert retry_after_ms({"retry-after": "nan"}) is None and retry_after_ms({"retry-after": "inf"}) is None
    assert retry_after_ms(None) is None and retry_after_ms({}) is None


@given(err=JSON)
def test_error_object_text_never_raises(err: Any) -> None:
    assert isinstance(error_object_text(err), str)


@given(kind=st.text(min_size=1, max_size=20).filter(str.strip), message=st.text(min_size=1).filter(str.strip))
def test_error_object_text_keeps_type_and_message(kind: str, message: str) -> None:
    text = error_object_text({"type": kind, "message": message, "code": None})
    assert kind.strip() in text and message.strip() in text


@given(
    asked=st.one_of(st.none(), st.integers(-10, 10**8), st.floats(allow_nan=False), st.text(max_size=5), st.booleans()),
    attempt=st.integers(1, 6),
    base=st.integers(0, 10_000),
    cap=st.integers(0, 10**6),
)
def test_session_retry_delay_bounds(asked: Any, attempt: int, base: int, cap: int) -> None:
    message: dict[str, Any] = {} if asked is None else {"retryAfterMs": asked}
    delay = session_retry_delay_ms(message, attempt, base, cap)
    backoff = base * 2 ** (attempt - 1)
    assert isinstance(delay, int) and delay >= backoff
    if cap:
        assert delay <= max(backoff, cap)
    if isinstance(asked, int) and not isinstance(asked, bool) and asked >= 0:
        assert delay == max(backoff, min(asked, cap) if cap else asked)


@given(
    window=st.integers(0, 2_000_000),
    max_tokens=st.integers(0, 200_000),
    usage=st.fixed_dictionaries(
        {k: st.integers(0, 2_000_000) for k in ("input", "output", "cacheRead", "cacheWrite")}
    ),
    estimate=st.integers(0, 2_000_000),
    more=st.integers(0, 2_000_000),
    reason=st.sampled_from(["length", "stop", "toolUse", "error", "aborted"]),
)
def test_length_overflow_only_for_length_and_monotonic_in_the_prompt(
    window: int, max_tokens: int, usage: dict[str, int], estimate: int, more: int, reason: str
) -> None:
    model = {"contextWindow": window, "maxTokens": max_tokens}
    message = {"stopReason": reason, "usage": usage}
    full = is_length_overflow(message, model, estimate)
    if reason != "length" or window == 0:
        assert not full
    if full:  # a bigger prompt never makes a full context "not full"
        assert is_length_overflow(message, model, estimate + more)
    if usage["input"] + usage["cacheRead"] + usage["cacheWrite"] + usage["output"] + estimate == 0 and window > 4096:
        assert not full


NO_PROXY_TEXT = st.text(alphabet=st.sampled_from(list("abc.-*:/[]1290, \t")), max_size=40)


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None, max_examples=60)
@given(no_proxy=NO_PROXY_TEXT, proxy=st.one_of(st.none(), st.text(max_size=30)))
def test_any_proxy_environment_builds_a_client(no_proxy: str, proxy: str | None) -> None:
    env = {"HTTP_PROXY": "http://127.0.0.1:3128", "NO_PROXY": no_proxy}
    with mock.patch.dict(os.environ, env, clear=False), mock.patch("sys.stderr"):
        routes = proxy_routes(proxy)
        client = new_http_client(proxy=proxy)
    asyncio.run(client.aclose())
    if "*" in [h.strip() for h in no_proxy.split(",")]:
        assert routes == {}
    else:
        assert routes["all://127.0.0.1"] is None  # loopback stays direct


def test_redact_url_hides_credentials() -> None:
    assert redact_url("http://user:pw@proxy:3128") == "http://***@proxy:3128"
    assert redact_url("http://proxy:3128") == "http://proxy:3128"


# --- adapters: any split, hostile frames ------------------------------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    with sse.SSEServer() as s:
        yield s


ADAPTERS = {
    "anthropic": (anthropic.stream, "anthropic-messages"),
    "openai_chat": (openai_completions.stream, "openai-completions"),
    "openai_responses": (openai_responses.stream, "openai-responses"),
}
FIXTURES = [
    "anthropic/text_utf8.sse",
    "anthropic/thinking_tool.sse",
    "anthropic/max_tokens_in_tool.sse",
    "anthropic/midstream_overloaded.sse",
    "openai_chat/azure_filter_results.sse",
    "openai_chat/refusal.sse",
    "openai_chat/content_filter.sse",
    "openai_chat/length_in_tool_call.sse",
    "openai_responses/reasoning_two_parts.sse",
    "openai_responses/error_quota_then_failed.sse",
    "openai_responses/incomplete_in_function_call.sse",
]


def _replay(server: Any, path: str, chunks: list[bytes]) -> list[dict[str, Any]]:
    stream_fn, api = ADAPTERS[path.split("/")[0]]
    model = {"id": "m1", "api": api, "provider": "vendor", "baseUrl": server.base_url,
             "contextWindow": 200000, "maxTokens": 32000, "reasoning": True}
    context = {"systemPrompt": None, "messages": [{"role": "user", "content": "hi", "timestamp": 1}], "tools": []}
    server.enqueue(sse.Reply(chunks=chunks))

    async def run() -> list[dict[str, Any]]:
        return [e async for e in stream_fn(model, context, StreamOptions(api_key="k", stream_deadline_s=10))]

    return asyncio.run(run())


def _final(events: list[dict[str, Any]]) -> dict[str, Any]:
    terminals = [e for e in events if e["type"] in ("done", "error")]
    assert len(terminals) == 1 and events[-1] is terminals[0]
    message = dict(terminals[0].get("message") or terminals[0]["error"])
    message.pop("timestamp", None)
    return json.loads(json.dumps(message))


@pytest.mark.parametrize("path", FIXTURES)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None,
          max_examples=15)
@given(cuts=st.lists(st.integers(min_value=1, max_value=4000), max_size=40))
def test_any_split_gives_the_same_message(server: Any, path: str, cuts: list[int]) -> None:
    data = fixture(path)
    points = sorted({c % len(data) for c in cuts} - {0})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    assert _final(_replay(server, path, chunks)) == _final(_replay(server, path, [data]))


HOSTILE = st.sampled_from([
    b"data: {not json\n\n",
    b"data: 5\n\n",
    b"data: []\n\n",
    b"data: null\n\n",
    b'data: {"type": 7}\n\n',
    b'data: {"choices": "x"}\n\n',
    b'data: {"type":"content_block_delta","index":99,"delta":{"type":"text_delta","text":"x"}}\n\n',
    b'data: {"type":"response.output_text.delta","output_index":42,"delta":"x"}\n\n',
    b'event: error\ndata: {"error": 3}\n\n',
    b"event: ping\ndata: \n\n",
    b": comment\n\n",
    b"\xff\xfe\n\n",
    b"data: \x00\n\n",
])


@pytest.mark.parametrize("path", ["anthropic/thinking_tool.sse", "openai_chat/refusal.sse",
                                  "openai_responses/reasoning_two_parts.sse"])
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None,
          max_examples=25)
@given(junk=st.lists(st.tuples(st.integers(0, 10**6), HOSTILE), min_size=1, max_size=4))
def test_garbage_frames_end_in_exactly_one_terminal_event(server: Any, path: str, junk: list[Any]) -> None:
    frames = fixture(path).split(b"\n\n")
    for position, frame in junk:
        frames.insert(position % (len(frames) + 1), frame.rstrip(b"\n"))
    events = _replay(server, path, [b"\n\n".join(frames)])
    _final(events)  # one terminal event, last; the stream never raised


# --- cost at ×10 / ×100 -----------------------------------------------------------------------------


def _chat_refusal_frames(n: int) -> list[str]:
    delta = {"id": "c", "choices": [{"index": 0, "delta": {"refusal": "word word "}, "finish_reason": None,
                                     "content_filter_results": {"hate": {"filtered": False}}}]}
    return [json.dumps(delta)] * n + [json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})]


def _responses_summary_frames(n: int) -> list[str]:
    frames = [json.dumps({"type": "response.output_item.added", "output_index": 0,
                          "item": {"id": "rs", "type": "reasoning", "summary": []}})]
    for i in range(n):
        frames.append(json.dumps({"type": "response.reasoning_summary_part.added", "output_index": 0,
                                  "summary_index": i}))
        frames.append(json.dumps({"type": "response.reasoning_summary_text.delta", "output_index": 0,
                                  "summary_index": i, "delta": "a summary part "}))
    return frames


def _parse_seconds(parser_cls: Any, api: str, frames: list[str]) -> float:
    model = {"id": "m", "api": api, "provider": "p", "contextWindow": 100000, "maxTokens": 1000}
    parser = parser_cls(model, {"messages": []}, StreamOptions())
    assert isinstance(parser.out, AssistantStream)
    # CPU time of this process, not wall time: other work on a loaded machine does not inflate it
    start = time.process_time()
    for frame in frames:
        parser.on_event("", frame)
    return time.process_time() - start


@pytest.mark.parametrize(
    ("parser_cls", "api", "frames"),
    [
        (openai_completions.ChatParser, "openai-completions", _chat_refusal_frames),
        (openai_responses.ResponsesParser, "openai-responses", _responses_summary_frames),
    ],
)
def test_parsing_cost_is_linear_at_10x_and_100x(parser_cls: Any, api: str, frames: Any) -> None:
    base = 1000
    runs = {1: 3, 10: 3, 100: 1}  # the best of a few runs for the short ones: less noise from the machine
    times = {k: min(_parse_seconds(parser_cls, api, frames(base * k)) for _ in range(n)) for k, n in runs.items()}
    # Linear is 10× and 100×; the old quadratic text accumulation took ~600× at 100× (100,000 deltas: 16 s).
    assert times[10] < 25 * times[1] + 0.05, times
    assert times[100] < 250 * times[1] + 0.2, times
