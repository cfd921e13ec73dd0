"""Usage values of any JSON type, in any usage field of the four wire parsers, never raise and
always give non-negative integer counts and a non-negative cost; the reply's end is unaffected."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from atomic_host.contract.providers import StreamOptions
from atomic_host.kit.llm.stream import AssistantStream
from atomic_host.kit.llm.usage import MAX_COUNT, UsageFields, token_count
from builtin_plugins.providers.anthropic import AnthropicParser
from builtin_plugins.providers.google import GeminiParser
from builtin_plugins.providers.openai_completions import ChatParser
from builtin_plugins.providers.openai_responses import ResponsesParser

MODEL = {"id": "m1", "provider": "p", "api": "x", "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 4}}
SCALARS = (
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
    | st.sampled_from([1e400, -1e400, 2**53, 2**53 - 1, 10**30, -(10**30), 0.5, -0.0])
)  # fmt: skip
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                          max_size=3), max_leaves=8)


def _usage_objects(keys: list[str], nested: dict[str, list[str]]) -> Any:
    flat = {k: VALUES for k in keys}
    inner = {
        k: st.fixed_dictionaries({}, optional={f: VALUES for f in fields}) | VALUES for k, fields in nested.items()
    }
    return st.fixed_dictionaries({}, optional={**flat, **inner}) | VALUES


def _check(message: dict[str, Any]) -> None:
    usage = message["usage"]
    for key, value in usage.items():
        if key == "cost":
            assert all(math.isfinite(v) and v >= 0 for v in value.values()), value
        else:
            assert type(value) is int and 0 <= value <= 4 * MAX_COUNT, (key, value)


def _enc(value: Any) -> str:
    return json.dumps(value)  # NaN/Infinity for non-finite floats: what event_json.loads reads back


ANTHROPIC = _usage_objects(
    ["input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"],
    {"cache_creation": ["ephemeral_1h_input_tokens"], "output_tokens_details": ["thinking_tokens"]},
)
CHAT = _usage_objects(
    ["prompt_tokens", "completion_tokens", "prompt_cache_hit_tokens", "cached_tokens", "total_tokens"],
    {
        "prompt_tokens_details": ["cached_tokens", "cache_write_tokens"],
        "completion_tokens_details": ["reasoning_tokens"],
    },
)
RESPONSES = _usage_objects(
    ["input_tokens", "output_tokens", "total_tokens"],
    {"input_tokens_details": ["cached_tokens", "cache_write_tokens"], "output_tokens_details": ["reasoning_tokens"]},
)
GEMINI = _usage_objects(
    ["promptTokenCount", "toolUsePromptTokenCount", "cachedContentTokenCount", "thoughtsTokenCount",
     "candidatesTokenCount", "totalTokenCount"], {},
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(ANTHROPIC, ANTHROPIC)
def test_anthropic(start: Any, delta: Any) -> None:
    parser = AnthropicParser(MODEL, {}, StreamOptions())
    parser.on_event("message_start", f'{{"type":"message_start","message":{{"id":"m","usage":{_enc(start)}}}}}')
    parser.on_event("message_delta", f'{{"type":"message_delta","delta":{{"stop_reason":"end_turn"}},'
                                     f'"usage":{_enc(delta)}}}')  # fmt: skip
    (done,) = parser.on_event("message_stop", '{"type":"message_stop"}')
    assert done["type"] == "done"
    _check(done["message"])


@settings(max_examples=150, deadline=None)
@given(CHAT)
def test_chat_completions(usage: Any) -> None:
    parser = ChatParser({**MODEL, "api": "openai-completions"}, {}, StreamOptions())
    parser.on_event("message", '{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}')
    parser.on_event("message", f'{{"choices":[],"usage":{_enc(usage)}}}')
    (*_, done) = parser.on_event("message", "[DONE]")
    assert done["type"] == "done"
    _check(done["message"])


@settings(max_examples=150, deadline=None)
@given(RESPONSES)
def test_responses(usage: Any) -> None:
    parser = ResponsesParser({**MODEL, "api": "openai-responses"}, {}, StreamOptions())
    completed = f'{{"type":"response.completed","response":{{"status":"completed","usage":{_enc(usage)}}}}}'
    (done,) = parser.on_event("response.completed", completed)
    assert done["type"] == "done"
    _check(done["message"])


@settings(max_examples=150, deadline=None)
@given(GEMINI)
def test_gemini(meta: Any) -> None:
    parser = GeminiParser({**MODEL, "api": "google-generative-ai"}, {}, StreamOptions())
    chunk = {"candidates": [{"content": {"parts": [{"text": "hi"}]}, "finishReason": "STOP"}]}
    parser.on_event("message", json.dumps(chunk)[:-1] + f',"usageMetadata":{_enc(meta)}}}')
    (*_, done) = parser.finish()
    assert done["type"] == "done"
    _check(done["message"])


@given(VALUES)
def test_token_count_is_a_count_or_none(value: Any) -> None:
    count, fine = token_count(value)
    assert count is None or (type(count) is int and 0 <= count <= MAX_COUNT)
    assert fine == (type(value) in (int, float) and count == value)


@given(VALUES, st.lists(st.text(max_size=4), min_size=1, max_size=3))
def test_usage_fields_never_raise_and_note_what_they_drop(raw: Any, path: list[str]) -> None:
    notes: list[tuple[str, Any]] = []
    count = UsageFields(raw, lambda field, value: notes.append((field, value))).count(*path)
    assert count is None or (type(count) is int and count >= 0)
    if type(raw) is dict and notes == [] and count is None:
        node: Any = raw
        for key in path:  # nothing noted: the path is absent (None somewhere), not a bad value
            node = node.get(key) if type(node) is dict else None
        assert node is None


def test_set_usage_from_another_adapter_is_clamped_and_noted(capsys: Any) -> None:
    out = AssistantStream({**MODEL, "provider": "p-set-usage"})
    out.set_usage(input=-5, output=float("inf"), cacheRead="12", cacheWrite=2.0, totalTokens={"n": 1})
    usage = out.message["usage"]
    assert (usage["input"], usage["output"], usage["cacheRead"], usage["cacheWrite"]) == (0, 0, 0, 2)
    assert usage["totalTokens"] == 2 and usage["cost"]["total"] >= 0
    out.set_usage(input=-5)  # noted once per provider and field
    noted = [line for line in capsys.readouterr().err.splitlines() if "p-set-usage: usage field" in line]
    assert [line.split()[4] for line in noted] == ["input", "output", "cacheRead", "totalTokens"], noted
