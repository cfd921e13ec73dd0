"""The Gemini frame parser under any split, hostile frames and big inputs.

Fixtures are replayed through the real local SSE server cut at random byte offsets (inside UTF-8
characters, between ``\\r`` and ``\\n``, inside ``data:``) and must give the same message; garbage
frames anywhere end in exactly one terminal event and never an exception; parsing cost stays
linear at ×10 / ×100 the usual size.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from gem_helpers import fixture, gemini_model, sse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atomic_host.contract.providers import StreamOptions
from builtin_plugins.providers import google
from builtin_plugins.providers.google import GeminiParser

pytestmark = pytest.mark.slow  # hypothesis over every chunking

CONTEXT: dict[str, Any] = {"systemPrompt": None, "messages": [{"role": "user", "content": "hi", "timestamp": 1}]}
SSE_FIXTURES = [
    "text_cached.sse",
    "thinking_signature.sse",
    "function_calls.sse",
    "safety_stop.sse",
    "prompt_blocked.sse",
    "max_tokens_in_call.sse",
    "midstream_internal.sse",
    "gemini3_call_id.sse",
]
SLOW: dict[str, Any] = {
    "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    "deadline": None,
}
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    with sse.SSEServer() as s:
        yield s


def _replay(server: Any, chunks: list[bytes], model_id: str = "gemini-2.5-flash") -> list[dict[str, Any]]:
    server.enqueue(sse.Reply(chunks=chunks))
    model = gemini_model(server.base_url, model_id)

    async def run() -> list[dict[str, Any]]:
        options = StreamOptions(api_key="k", stream_deadline_s=10)
        return [e async for e in google.stream(model, CONTEXT, options)]

    return asyncio.run(run())


def _final(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The terminal event's message (checked to be the one, last, terminal event), made comparable:
    no timestamp, the made-up tool-call ids numbered in order."""
    terminals = [e for e in events if e["type"] in ("done", "error")]
    assert len(terminals) == 1 and events[-1] is terminals[0], [e["type"] for e in events]
    assert events[0]["type"] == "start"
    message = json.loads(json.dumps(terminals[0].get("message") or terminals[0]["error"]))
    message.pop("timestamp", None)
    made_up = iter(range(1000))
    text = re.sub(r"gcall_[0-9a-f]+", lambda _m: f"gcall_{next(made_up)}", json.dumps(message))
    return json.loads(text)


def _frames(name: str) -> list[str]:
    """The ``data:`` payloads of a fixture."""
    text = fixture(name).decode("utf-8").replace("\r\n", "\n")
    return [f.removeprefix("data: ") for f in text.split("\n\n") if f.strip()]


def _parse(frames: list[Any], model: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Frames straight into the parser, as ``drive`` feeds it (a terminal event ends the stream)."""
    parser = GeminiParser(model or gemini_model("http://x"), CONTEXT, StreamOptions())
    events: list[dict[str, Any]] = []
    for frame in frames:
        events += parser.on_event("", frame if isinstance(frame, str) else json.dumps(frame))
        if parser.out.finished:
            return events
    return events + parser.finish()


def _one_terminal(events: list[dict[str, Any]]) -> dict[str, Any]:
    terminals = [e for e in events if e["type"] in ("done", "error")]
    assert len(terminals) == 1 and events[-1] is terminals[0], [e["type"] for e in events]
    return terminals[0].get("message") or terminals[0]["error"]


# --- any split through the real server ----------------------------------------------------------


@pytest.mark.parametrize("name", SSE_FIXTURES)
@settings(**SLOW, max_examples=12)
@given(cuts=st.lists(st.integers(min_value=1, max_value=5000), max_size=40))
def test_any_split_gives_the_same_message(server: Any, name: str, cuts: list[int]) -> None:
    data = fixture(name)
    points = sorted({c % len(data) for c in cuts} - {0})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    assert _final(_replay(server, chunks)) == _final(_replay(server, [data]))


def test_byte_at_a_time_keeps_utf8_and_crlf(server: Any) -> None:
    data = fixture("text_cached.sse")
    assert b"\r\n" in data and "☕".encode() in data
    message = _final(_replay(server, [data[i : i + 1] for i in range(len(data))]))
    assert message["content"] == [{"type": "text", "text": "Bonjour — le café est prêt ☕, naïve façade 🦅."}]


# --- hostile frames -----------------------------------------------------------------------------

HOSTILE = st.sampled_from(
    [
        b"data: {not json",
        b"data: 5",
        b"data: []",
        b"data: null",
        b'data: "text"',
        b'data: {"candidates": "x"}',
        b'data: {"candidates": [7, null]}',
        b'data: {"candidates": [{"content": {"parts": {"text": "x"}}}]}',
        b'data: {"candidates": [{"content": {"parts": [5, null, [], {"text": 7}, {"functionCall": "x"}]}}]}',
        b'data: {"candidates": [{"content": {"parts": [{"functionCall": {"name": 3, "args": [1], "id": {}}}]}}]}',
        b'data: {"candidates": [{"finishReason": 12, "safetyRatings": "x"}]}',
        b'data: {"usageMetadata": {"promptTokenCount": "9", "candidatesTokenCount": -4, "thoughtsTokenCount": true}}',
        b'data: {"usageMetadata": []}',
        b'data: {"promptFeedback": {"blockReason": 3}}',
        b'data: {"promptFeedback": "blocked"}',
        b'data: {"error": "boom"}',
        b'data: {"candidates": [{"content": {"parts": [{"thoughtSignature": 5}, {"thought": "yes", "text": "t"}]}}]}',
        b": keep-alive comment",
        b"event: ping\ndata: ",
        b"\xff\xfe",
        b"data: \x00",
    ]
)


@pytest.mark.parametrize("name", ["thinking_signature.sse", "function_calls.sse", "safety_stop.sse"])
@settings(**SLOW, max_examples=20)
@given(junk=st.lists(st.tuples(st.integers(0, 10**6), HOSTILE), min_size=1, max_size=4))
def test_garbage_frames_through_the_server_end_in_one_terminal_event(server: Any, name: str, junk: list[Any]) -> None:
    frames = fixture(name).split(b"\r\n\r\n")
    for position, frame in junk:
        frames.insert(position % (len(frames) + 1), frame)
    _final(_replay(server, [b"\r\n\r\n".join(frames)]))


@settings(max_examples=300, deadline=None)
@given(
    junk=st.lists(st.tuples(st.integers(0, 100), JSON), max_size=6),
    name=st.sampled_from(SSE_FIXTURES),
)
def test_any_json_value_as_a_frame_never_raises(junk: list[Any], name: str) -> None:
    frames: list[Any] = list(_frames(name))
    for position, value in junk:
        frames.insert(position % (len(frames) + 1), value)
    message = _one_terminal(_parse(frames))
    assert message["stopReason"] in ("stop", "length", "toolUse", "error")
    json.dumps(message)  # still plain JSON


USAGE_KEYS = (
    "promptTokenCount",
    "candidatesTokenCount",
    "thoughtsTokenCount",
    "cachedContentTokenCount",
    "totalTokenCount",
)
PART = st.one_of(
    st.fixed_dictionaries({"text": st.one_of(st.text(max_size=30), JSON)}, optional={"thought": JSON}),
    st.fixed_dictionaries(
        {"functionCall": st.one_of(JSON, st.fixed_dictionaries({"name": JSON, "args": JSON}, optional={"id": JSON}))},
        optional={"thoughtSignature": JSON},
    ),
    st.fixed_dictionaries({"thoughtSignature": st.one_of(st.text(max_size=20), JSON)}),
    JSON,
)
CANDIDATE = st.fixed_dictionaries(
    {},
    optional={
        "content": st.one_of(JSON, st.fixed_dictionaries({"parts": st.one_of(st.lists(PART, max_size=5), JSON)})),
        "finishReason": st.one_of(st.sampled_from(["STOP", "MAX_TOKENS", "SAFETY", "OTHER", "NEW_ONE"]), JSON),
        "safetyRatings": JSON,
        "finishMessage": JSON,
    },
)
RESPONSE = st.fixed_dictionaries(
    {},
    optional={
        "candidates": st.one_of(st.lists(CANDIDATE, max_size=2), JSON),
        "usageMetadata": st.one_of(
            JSON,
            st.fixed_dictionaries({k: st.one_of(st.integers(-5, 10**9), JSON) for k in USAGE_KEYS}),
        ),
        "promptFeedback": st.one_of(
            JSON, st.fixed_dictionaries({"blockReason": st.one_of(st.text(max_size=10), JSON)})
        ),
        "modelVersion": JSON,
        "responseId": JSON,
        "error": JSON,
    },
)


@settings(max_examples=400, deadline=None)
@given(frames=st.lists(RESPONSE, max_size=8))
def test_response_shaped_garbage_gives_a_well_formed_message(frames: list[dict[str, Any]]) -> None:
    message = _one_terminal(_parse(frames))
    for block in message["content"]:
        assert block["type"] in ("text", "thinking", "toolCall")
        if block["type"] == "toolCall":
            assert isinstance(block["id"], str) and block["id"] and isinstance(block["name"], str)
            assert isinstance(block["arguments"], dict)
        else:
            assert isinstance(block[block["type"]], str)
    usage = message["usage"]
    assert all(isinstance(usage[k], int) and usage[k] >= 0 for k in ("input", "output", "cacheRead", "totalTokens"))
    ids = [b["id"] for b in message["content"] if b["type"] == "toolCall"]
    assert len(ids) == len(set(ids))
    if message["stopReason"] == "error":
        assert message["errorMessage"]


# --- huge parts ---------------------------------------------------------------------------------


def _chunk(parts: list[dict[str, Any]], finish: str | None = None) -> str:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return json.dumps({"candidates": [candidate]}, ensure_ascii=False)


def test_huge_text_and_argument_parts_in_small_pieces(server: Any) -> None:
    text = "é✓ long line\n" * 80_000  # ~1.2 MB of text in one part
    command = "x" * 500_000
    body = (
        f"data: {_chunk([{'text': text}])}\r\n\r\n"
        f"data: {_chunk([{'functionCall': {'name': 'bash', 'args': {'command': command}}}], 'STOP')}\r\n\r\n"
    ).encode()
    start = time.perf_counter()
    message = _final(_replay(server, [body[i : i + 4096] for i in range(0, len(body), 4096)]))
    assert time.perf_counter() - start < 20
    assert message["content"][0]["text"] == text
    assert message["content"][1]["arguments"] == {"command": command}
    assert message["stopReason"] == "toolUse"


# --- cost at ×10 / ×100 -------------------------------------------------------------------------


def _text_frames(n: int) -> list[str]:
    frames = []
    for i in range(n):
        thought = i % 50 < 10  # runs of thoughts and text: blocks open and close as they would
        frames.append(_chunk([{"text": "word word ", **({"thought": True} if thought else {})}]))
    return [*frames, _chunk([{"text": ""}], "STOP")]


def _call_frames(n: int) -> list[str]:
    call = {"functionCall": {"name": "bash", "args": {"command": "echo hi"}}}
    return [_chunk([call]) for _ in range(n)] + [_chunk([], "STOP")]


def _parse_seconds(frames: list[str]) -> float:
    parser = GeminiParser(gemini_model("http://x"), {"messages": []}, StreamOptions())
    usage = json.dumps({"usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 3, "totalTokenCount": 13}})
    # CPU time of this process, not wall time: other work on a loaded machine does not inflate it
    start = time.process_time()
    for frame in frames:
        parser.on_event("", frame)
        parser.on_event("", usage)
    parser.finish()
    return time.process_time() - start


@pytest.mark.parametrize("frames", [_text_frames, _call_frames], ids=["text", "calls"])
def test_parsing_cost_is_linear_at_10x_and_100x(frames: Any) -> None:
    base = 300
    runs = {1: 3, 10: 3, 100: 1}  # the best of a few runs for the short ones: less noise from the machine
    times = {k: min(_parse_seconds(frames(base * k)) for _ in range(n)) for k, n in runs.items()}
    # Linear is 10× and 100×; a quadratic step (e.g. scanning all earlier calls per call) shows as ~100×/10,000×.
    assert times[10] < 25 * times[1] + 0.05, times
    assert times[100] < 250 * times[1] + 0.2, times
