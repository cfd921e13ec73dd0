"""What the Gemini adapter sends: tool schemas the API accepts, thinking config per model family and
level, contents replayed from other models, error bodies, the >200k price tier, overflow text."""

from __future__ import annotations

import json
from typing import Any

import pytest
from gem_helpers import fixture, gemini_model
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from atomic_host.contract.providers import StreamOptions
from atomic_host.kit.llm.errors import classify, is_context_overflow, is_retryable_error
from builtin_plugins.catalog.data import catalog_providers, provenance
from builtin_plugins.providers.google import (
    SKIP_SIGNATURE,
    GeminiParser,
    convert_contents,
    function_declarations,
    gemini_schema,
    google_error,
    rewrite_http_error,
)

ALLOWED = {
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "items",
    "properties",
    "required",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "minProperties",
    "maxProperties",
    "anyOf",
    "propertyOrdering",
}
CATALOG = {m["id"]: m for p in catalog_providers("google.json") for m in p.models}


def _keys_ok(schema: Any) -> None:
    """Every keyword, at every depth, is one the API knows; types are single names."""
    assert isinstance(schema, dict)
    assert set(schema) <= ALLOWED, set(schema) - ALLOWED
    assert "type" not in schema or isinstance(schema["type"], str)
    for sub in (schema.get("properties") or {}).values():
        _keys_ok(sub)
    if "items" in schema:
        _keys_ok(schema["items"])
    for sub in schema.get("anyOf") or []:
        _keys_ok(sub)


# --- tool schemas -------------------------------------------------------------------------------


class Point(BaseModel):
    x: int
    y: int = 0


class Shape(BaseModel):
    kind: str = Field("box", json_schema_extra={"const": "box"})
    corner: Point
    others: list[Point] = []
    label: str | None = None
    tags: dict[str, str] = {}
    size: int = Field(1, gt=0, le=10)
    url: str = Field("", json_schema_extra={"format": "uri"})
    when: str = Field("", json_schema_extra={"format": "date-time"})


def test_pydantic_schema_becomes_what_gemini_accepts() -> None:
    raw = {"$schema": "https://json-schema.org/draft/2020-12/schema", **Shape.model_json_schema()}
    assert "$defs" in raw  # the nested model is a $ref
    out = gemini_schema(raw)
    _keys_ok(out)
    props = out["properties"]
    assert props["corner"]["type"] == "object" and set(props["corner"]["properties"]) == {"x", "y"}
    assert props["corner"]["required"] == ["x"]
    assert props["others"]["items"]["properties"]["x"]["type"] == "integer"
    assert props["label"] == {"type": "string", "nullable": True, "title": "Label"}
    assert props["tags"]["type"] == "object" and "additionalProperties" not in json.dumps(props["tags"])
    assert props["kind"]["enum"] == ["box"]
    assert props["size"]["maximum"] == 10 and "exclusiveMinimum" not in props["size"]
    assert "format" not in props["url"] and props["when"]["format"] == "date-time"
    assert out["required"] == ["corner"]


def test_refs_unions_and_type_lists() -> None:
    schema = {
        "type": "object",
        "properties": {
            "node": {"$ref": "#/$defs/Node"},
            "either": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "maybe": {"type": ["number", "null"]},
            "multi": {"type": ["string", "integer"]},
            "merged": {
                "allOf": [
                    {"properties": {"a": {"type": "string"}}, "required": ["a"]},
                    {"properties": {"b": {"type": "boolean"}}},
                ]
            },
            "choice": {"enum": [1, 2, 3]},
            "level": {"enum": ["low", "high", None]},
            "list": {"type": "array"},
        },
        "required": ["node", "ghost"],
        "additionalProperties": False,
        "$defs": {
            "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}, "v": {"type": "string"}}}
        },
    }
    out = gemini_schema(schema)
    _keys_ok(out)
    props = out["properties"]
    assert props["node"]["properties"]["v"] == {"type": "string"}
    assert props["node"]["properties"]["next"] == {"type": "object"}  # recursion stops
    assert props["either"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert props["maybe"] == {"type": "number", "nullable": True}
    assert props["multi"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert set(props["merged"]["properties"]) == {"a", "b"} and props["merged"]["required"] == ["a"]
    assert "enum" not in props["choice"]  # only string enums exist in the API
    assert props["level"] == {"type": "string", "enum": ["low", "high"], "nullable": True}
    assert props["list"] == {"type": "array", "items": {"type": "string"}}
    assert out["required"] == ["node"]  # a required name without a property is dropped


def test_tool_without_parameters_declares_none_and_raw_schema_compat() -> None:
    tools = [
        {"name": "now", "description": "time", "parameters": {"type": "object", "properties": {}}},
        {
            "name": "add",
            "description": "sum",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "integer"}},
                "additionalProperties": False,
                "$schema": "x",
            },
        },
    ]
    plain = function_declarations(tools, gemini_model("http://x"))
    assert plain[0] == {"name": "now", "description": "time"}
    assert plain[1]["parameters"] == {"type": "object", "properties": {"a": {"type": "integer"}}}
    raw = function_declarations(tools, gemini_model("http://x", compat={"supportsParametersJsonSchema": True}))
    assert raw[1]["parametersJsonSchema"] == {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "additionalProperties": False,
    }


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "properties",
                    "items",
                    "anyOf",
                    "oneOf",
                    "allOf",
                    "$ref",
                    "$defs",
                    "enum",
                    "const",
                    "required",
                    "format",
                    "nullable",
                    "description",
                    "minimum",
                    "x",
                ]
            )
            | st.text(max_size=5),
            inner,
            max_size=5,
        )
    ),
    max_leaves=25,
)


@settings(max_examples=500, deadline=None)
@given(schema=JSON)
def test_any_schema_converts_without_raising_to_known_keywords(schema: Any) -> None:
    out = gemini_schema(schema)
    _keys_ok(out)
    json.dumps(out)


def test_deep_and_self_referencing_schemas_stay_bounded() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(200):
        deep = {"type": "object", "properties": {"a": deep}}
    out = gemini_schema(deep)
    _keys_ok(out)
    assert len(json.dumps(out)) < 5000
    loop = {
        "$ref": "#/$defs/A",
        "$defs": {"A": {"allOf": [{"$ref": "#/$defs/A"}], "properties": {"x": {"$ref": "#/$defs/A"}}}},
    }
    _keys_ok(gemini_schema(loop))


# --- thinking and max tokens --------------------------------------------------------------------


def _config(model_id: str, level: str | None, **options: Any) -> dict[str, Any]:
    model = {**CATALOG[model_id], "baseUrl": "http://x"} if model_id in CATALOG else gemini_model("http://x", model_id)
    parser = GeminiParser(model, {"messages": []}, StreamOptions(reasoning=level, **options))
    return parser.request()[2]["generationConfig"]


@pytest.mark.parametrize(
    ("model_id", "level", "thinking"),
    [
        ("gemini-2.5-pro", "minimal", {"includeThoughts": True, "thinkingBudget": 128}),
        ("gemini-2.5-pro", "high", {"includeThoughts": True, "thinkingBudget": 32768}),
        ("gemini-2.5-pro", "xhigh", {"includeThoughts": True, "thinkingBudget": 32768}),
        ("gemini-2.5-pro", None, None),  # cannot think "off": the model's own default
        ("gemini-2.5-flash", "low", {"includeThoughts": True, "thinkingBudget": 2048}),
        ("gemini-2.5-flash", "high", {"includeThoughts": True, "thinkingBudget": 24576}),
        ("gemini-2.5-flash", None, {"thinkingBudget": 0}),
        ("gemini-2.5-flash-lite", "minimal", {"includeThoughts": True, "thinkingBudget": 512}),
        ("gemini-3-pro-preview", "low", {"includeThoughts": True, "thinkingLevel": "LOW"}),
        ("gemini-3-pro-preview", "high", {"includeThoughts": True, "thinkingLevel": "HIGH"}),
        ("gemini-3-flash-preview", "minimal", {"includeThoughts": True, "thinkingLevel": "MINIMAL"}),
        ("gemini-exp-unknown", "medium", {"includeThoughts": True, "thinkingBudget": -1}),  # dynamic
    ],
)
def test_thinking_config(model_id: str, level: str | None, thinking: dict[str, Any] | None) -> None:
    assert _config(model_id, level).get("thinkingConfig") == thinking


def test_thinking_budgets_setting_and_max_output_tokens() -> None:
    config = _config("gemini-2.5-flash", "medium", thinking_budgets={"medium": 3000}, max_tokens=1000)
    assert config["thinkingConfig"]["thinkingBudget"] == 3000
    assert config["maxOutputTokens"] == 4000  # thoughts count against the output limit
    assert _config("gemini-2.5-flash", "high", max_tokens=60000)["maxOutputTokens"] == 65536  # the model's cap
    assert _config("gemini-3-pro-preview", "high", max_tokens=1000)["maxOutputTokens"] == 1000
    assert _config("gemini-2.5-flash", None, temperature=0.2)["temperature"] == 0.2
    plain = gemini_model("http://x", reasoning=False)
    body = GeminiParser(plain, {"messages": []}, StreamOptions(reasoning="high")).request()[2]
    assert "thinkingConfig" not in body["generationConfig"]


@pytest.mark.parametrize(
    ("base", "model_id", "url"),
    [
        ("http://h", "gemini-2.5-flash", "http://h/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"),
        (
            "http://h/v1beta/",
            "gemini-2.5-flash",
            "http://h/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
        ),
        ("http://h/v1", "models/gemini-x", "http://h/v1/models/gemini-x:streamGenerateContent?alt=sse"),
    ],
)
def test_url(base: str, model_id: str, url: str) -> None:
    parser = GeminiParser(gemini_model(base, model_id), {"messages": []}, StreamOptions(api_key="k"))
    got, headers, _ = parser.request()
    assert got == url and headers["x-goog-api-key"] == "k"


# --- contents -----------------------------------------------------------------------------------

PNG = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}


def _assistant(content: list[dict[str, Any]], **who: Any) -> dict[str, Any]:
    base = {"role": "assistant", "provider": "google", "api": "google-generative-ai", "model": "gemini-2.5-flash"}
    return {**base, **who, "content": content, "stopReason": "toolUse", "timestamp": 1}


def test_contents_from_another_model_images_and_results() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "look"}, PNG], "timestamp": 1},
        _assistant(
            [
                {"type": "thinking", "thinking": "claude thought", "thinkingSignature": "c2ln"},
                {"type": "toolCall", "id": "toolu_01", "name": "read", "arguments": {"path": "a"}},
                {"type": "toolCall", "id": "toolu_02", "name": "read", "arguments": {"path": "b"}},
            ],
            provider="anthropic",
            api="anthropic-messages",
            model="claude-sonnet-4-5",
        ),
        {
            "role": "toolResult",
            "toolCallId": "toolu_01",
            "toolName": "read",
            "content": [{"type": "text", "text": "A"}],
            "isError": False,
            "timestamp": 2,
        },
        {
            "role": "toolResult",
            "toolCallId": "toolu_02",
            "toolName": "read",
            "content": [PNG],
            "isError": True,
            "timestamp": 3,
        },
        {"role": "user", "content": "next", "timestamp": 4},
    ]
    contents = convert_contents(messages, gemini_model("http://x"))
    assert contents[0] == {
        "role": "user",
        "parts": [{"text": "look"}, {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}],
    }
    model_turn = contents[1]["parts"]
    assert model_turn[0] == {"text": "claude thought"}  # another model's thinking is text
    assert model_turn[1] == {"functionCall": {"name": "read", "args": {"path": "a"}}}  # no foreign id/signature
    results = contents[2]["parts"]
    assert results[0] == {"functionResponse": {"name": "read", "response": {"output": "A"}}}
    assert results[1] == {"functionResponse": {"name": "read", "response": {"error": "(see the attached image)"}}}
    assert results[2] == {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    assert contents[3] == {"role": "user", "parts": [{"text": "next"}]}
    # A text-only model gets no image parts.
    text_only = convert_contents(messages, gemini_model("http://x", input=["text"]))
    assert all("inlineData" not in p for c in text_only for p in c["parts"])


def test_gemini_3_calls_without_a_signature_get_the_skip_value() -> None:
    messages = [
        {"role": "user", "content": "hi", "timestamp": 1},
        _assistant(
            [{"type": "toolCall", "id": "call_1", "name": "bash", "arguments": {}}],
            provider="openai",
            api="openai-responses",
            model="gpt-5",
        ),
        {
            "role": "toolResult",
            "toolCallId": "call_1",
            "toolName": "bash",
            "content": [],
            "isError": False,
            "timestamp": 2,
        },
    ]
    contents = convert_contents(messages, gemini_model("http://x", "gemini-3-pro-preview"))
    assert contents[1]["parts"][0]["thoughtSignature"] == SKIP_SIGNATURE
    assert contents[2]["parts"][0]["functionResponse"]["response"] == {"output": "(no output)"}


def test_same_model_signatures_and_errored_turns() -> None:
    messages = [
        {"role": "user", "content": "hi", "timestamp": 1},
        _assistant([{"type": "text", "text": "partial"}]),
        _assistant([{"type": "text", "text": "ok", "textSignature": "not base64!"}]),
    ]
    messages[1]["stopReason"] = "error"
    contents = convert_contents(messages, gemini_model("http://x"))
    assert [c["role"] for c in contents] == ["user", "model"]  # the errored turn is skipped
    assert contents[1]["parts"] == [{"text": "ok"}]  # a signature that is not base64 is not sent


# --- errors, tiers, overflow --------------------------------------------------------------------


def test_google_error_bodies() -> None:
    body = json.loads(fixture("http_429_resource_exhausted.json"))
    text, retry = google_error(body["error"])
    assert text == "429 RESOURCE_EXHAUSTED: Resource has been exhausted (e.g. check quota)." and retry == 1000
    assert (
        google_error(
            {
                "code": 503,
                "status": "UNAVAILABLE",
                "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2.5s"}],
            }
        )[1]
        == 2500
    )
    assert google_error({"message": "m", "details": [{"@type": "x.RetryInfo", "retryDelay": "soon"}]}) == ("m", None)
    assert google_error("plain") == ("plain", None)
    message = {"errorMessage": "429 " + json.dumps([body]), "retryAfterMs": 4000}  # an array body; a header won
    rewrite_http_error(message)
    assert message["errorMessage"].startswith("429 RESOURCE_EXHAUSTED:") and message["retryAfterMs"] == 4000
    html = {"errorMessage": "502 <html>Bad Gateway</html>"}
    rewrite_http_error(html)
    assert html == {"errorMessage": "502 <html>Bad Gateway</html>"}


@pytest.mark.parametrize(
    ("name", "retryable", "kind"),
    [
        ("http_429_resource_exhausted.json", True, "rate_limit"),
        ("http_503_unavailable.json", True, "unavailable"),
        ("http_400_api_key_invalid.json", False, "bad_request"),
        ("http_400_token_count.json", False, "overflow"),
    ],
)
def test_rewritten_errors_classify_as_the_host_expects(name: str, retryable: bool, kind: str) -> None:
    body = fixture(name).decode()
    message = {"stopReason": "error", "errorMessage": f"{json.loads(body)['error']['code']} {body}"}
    rewrite_http_error(message)
    assert is_retryable_error(message) is retryable and classify(message) == kind
    assert is_context_overflow(message, 1048576) is (kind == "overflow")


def test_safety_and_blocked_messages_are_never_retried() -> None:
    for name in ("safety_stop.sse", "prompt_blocked.sse"):
        parser = GeminiParser(gemini_model("http://x"), {"messages": []}, StreamOptions())
        events = []
        for frame in fixture(name).decode().split("\r\n\r\n"):
            if frame.strip() and not parser.out.finished:
                events += parser.on_event("", frame.removeprefix("data: "))
        if not parser.out.finished:
            events += parser.finish()
        message = events[-1]["error"]
        assert "safety" in message["errorMessage"] and not is_retryable_error(message)


def test_price_tier_above_200k_prompt_tokens() -> None:
    model = {**CATALOG["gemini-2.5-pro"], "baseUrl": "http://x"}
    parser = GeminiParser(model, {"messages": []}, StreamOptions())
    frame = {
        "usageMetadata": {
            "promptTokenCount": 250_000,
            "cachedContentTokenCount": 50_000,
            "candidatesTokenCount": 1000,
            "thoughtsTokenCount": 1000,
            "totalTokenCount": 252_000,
        }
    }
    parser.on_event("", json.dumps(frame))
    cost = parser.out.message["usage"]["cost"]
    assert cost["input"] == pytest.approx(200_000 * 2.5 / 1e6)
    assert cost["output"] == pytest.approx(2000 * 15 / 1e6)
    assert cost["cacheRead"] == pytest.approx(50_000 * 0.25 / 1e6)
    parser.on_event("", json.dumps({"usageMetadata": {"promptTokenCount": 1000, "candidatesTokenCount": 10}}))
    assert parser.out.message["usage"]["cost"]["input"] == pytest.approx(1000 * 1.25 / 1e6)


def test_catalog_facts() -> None:
    assert set(CATALOG) >= {"gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"}
    for model in CATALOG.values():
        assert model["api"] == "google-generative-ai" and model["provider"] == "google"
        assert model["contextWindow"] == 1048576 and 0 < model["maxTokens"] <= model["contextWindow"]
        cost = model["cost"]
        assert cost["output"] > cost["input"] > cost["cacheRead"] > 0 and cost["cacheWrite"] == 0
    (info,) = catalog_providers("google.json")
    assert info.env_keys == ["GEMINI_API_KEY", "GOOGLE_API_KEY"]
    assert info.base_url == "https://generativelanguage.googleapis.com"
    assert "genai-prices" in provenance("google.json") and "never fetched" in provenance("google.json")
