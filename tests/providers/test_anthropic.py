"""anthropic-messages adapter against a real local SSE server speaking Anthropic's wire format."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from helpers import SIMPLE_CONTEXT, anthropic_model, collect, final, types

from atomic_host.contract.providers import StreamOptions
from atomic_host.kit.llm.http_client import new_http_client
from atomic_host.testing_sse import Reply, SSEServer, anthropic_frames
from builtin_plugins.providers.anthropic import stream


def msg_start(input_tokens: int = 100, output_tokens: int = 1, **usage: int) -> dict:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens, **usage},
        },
    }


def text_reply(text_parts: list[str], stop: str = "end_turn", output_tokens: int = 50) -> list[str]:
    return anthropic_frames(
        [
            msg_start(),
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            {"type": "ping"},
            *[
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}
                for p in text_parts
            ],
            {"type": "content_block_stop", "index": 0},
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
            {"type": "message_stop"},
        ]
    )


async def test_text_stream_usage_cost_and_request_shape(sse_server: SSEServer) -> None:
    sse_server.enqueue(text_reply(["Hel", "lo!"]))
    model = anthropic_model(sse_server.base_url)
    events = await collect(stream(model, SIMPLE_CONTEXT, StreamOptions(api_key="sk-ant-api03-k")))
    assert types(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    assert events[4]["content"] == "Hello!"
    msg = final(events)
    assert msg["content"] == [{"type": "text", "text": "Hello!"}]
    assert msg["stopReason"] == "stop" and msg["rawStopReason"] == "end_turn"
    assert msg["responseId"] == "msg_01"
    assert all(e["partial"] is msg for e in events)
    usage = msg["usage"]
    assert (usage["input"], usage["output"], usage["totalTokens"]) == (100, 50, 150)
    assert usage["cost"]["input"] == pytest.approx(0.0003)
    assert usage["cost"]["output"] == pytest.approx(0.00075)
    assert usage["cost"]["total"] == pytest.approx(0.00105)

    req = sse_server.last_request
    assert req.path == "/v1/messages"
    assert req.headers["x-api-key"] == "sk-ant-api03-k"
    assert req.headers["anthropic-version"] == "2023-06-01"
    assert req.headers["accept"] == "text/event-stream"
    assert "authorization" not in req.headers
    body = req.body
    assert body["stream"] is True and body["model"] == "claude-sonnet-4-5"
    assert body["system"] == [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}
    ]
    assert body["thinking"] == {"type": "disabled"}


async def test_oauth_token_uses_bearer(sse_server: SSEServer) -> None:
    sse_server.enqueue(text_reply(["ok"]))
    opts = StreamOptions(api_key="sk-ant-oat01-secret")
    await collect(stream(anthropic_model(sse_server.base_url), SIMPLE_CONTEXT, opts))
    headers = sse_server.last_request.headers
    assert headers["authorization"] == "Bearer sk-ant-oat01-secret"
    assert "x-api-key" not in headers
    assert "oauth-2025-04-20" in headers["anthropic-beta"]


async def test_thinking_signature_and_tool_use_split_mid_token(sse_server: SSEServer) -> None:
    sse_server.enqueue(
        anthropic_frames(
            [
                msg_start(
                    input_tokens=20,
                    cache_read_input_tokens=1000,
                    cache_creation_input_tokens=500,
                    cache_creation={"ephemeral_1h_input_tokens": 100, "ephemeral_5m_input_tokens": 400},
                ),
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "thinking", "thinking": ""},
                },
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "thinking_delta", "thinking": "Let me "},
                },
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "thinking_delta", "thinking": "look."},
                },
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "signature_delta", "signature": "EqQB"},
                },
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "signature_delta", "signature": "Zz=="},
                },
                {"type": "content_block_stop", "index": 0},
                {
                    "type": "content_block_start",
                    "index": 1,
                    "content_block": {"type": "redacted_thinking", "data": "ENCRYPTED"},
                },
                {"type": "content_block_stop", "index": 1},
                {
                    "type": "content_block_start",
                    "index": 2,
                    "content_block": {"type": "tool_use", "id": "toolu_01", "name": "bash", "input": {}},
                },
                {
                    "type": "content_block_delta",
                    "index": 2,
                    "delta": {"type": "input_json_delta", "partial_json": ""},
                },
                {
                    "type": "content_block_delta",
                    "index": 2,
                    "delta": {"type": "input_json_delta", "partial_json": '{"comm'},
                },
                {
                    "type": "content_block_delta",
                    "index": 2,
                    "delta": {"type": "input_json_delta", "partial_json": 'and": "ls -la\\'},
                },
                {
                    "type": "content_block_delta",
                    "index": 2,
                    "delta": {"type": "input_json_delta", "partial_json": 'n", "timeout": 5}'},
                },
                {"type": "content_block_stop", "index": 2},
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "tool_use"},
                    "usage": {"output_tokens": 80, "input_tokens": None},
                },
                {"type": "message_stop"},
            ]
        )
    )
    model = anthropic_model(sse_server.base_url)
    tools = [{"name": "bash", "description": "Run", "parameters": {"type": "object", "properties": {}}}]
    ctx = {**SIMPLE_CONTEXT, "tools": tools}
    events = await collect(stream(model, ctx, StreamOptions(api_key="k", reasoning="medium", max_tokens=4000)))
    msg = final(events)
    assert events[-1]["reason"] == "toolUse"
    thinking, redacted, call = msg["content"]
    assert thinking == {"type": "thinking", "thinking": "Let me look.", "thinkingSignature": "EqQBZz=="}
    assert redacted == {
        "type": "thinking",
        "thinking": "[Reasoning redacted]",
        "redacted": True,
        "thinkingSignature": "ENCRYPTED",
    }
    assert call == {
        "type": "toolCall",
        "id": "toolu_01",
        "name": "bash",
        "arguments": {"command": "ls -la\n", "timeout": 5},
    }
    deltas = [e for e in events if e["type"] == "toolcall_delta"]
    assert "".join(d["delta"] for d in deltas) == '{"command": "ls -la\\n", "timeout": 5}'
    end = next(e for e in events if e["type"] == "toolcall_end")
    assert end["toolCall"]["arguments"]["timeout"] == 5
    usage = msg["usage"]
    assert (usage["input"], usage["output"], usage["cacheRead"], usage["cacheWrite"]) == (20, 80, 1000, 500)
    assert usage["cacheWrite1h"] == 100 and usage["totalTokens"] == 1600
    # 400 tokens at 3.75 $/M plus 100 one-hour tokens at 2 × 3 $/M
    assert usage["cost"]["cacheWrite"] == pytest.approx((3.75 * 400 + 6 * 100) / 1e6)
    assert usage["cost"]["cacheRead"] == pytest.approx(0.3 * 1000 / 1e6)

    body = sse_server.last_request.body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192, "display": "summarized"}
    assert body["max_tokens"] == 4000 + 8192
    assert body["tools"][0]["input_schema"] == {"type": "object", "properties": {}}
    assert body["tools"][0]["eager_input_streaming"] is True
    assert "interleaved-thinking-2025-05-14" in sse_server.last_request.headers["anthropic-beta"]


async def test_adaptive_thinking_and_replayed_history(sse_server: SSEServer) -> None:
    sse_server.enqueue(text_reply(["done"]))
    model = anthropic_model(
        sse_server.base_url,
        id="claude-opus-4-6",
        compat={"forceAdaptiveThinking": True},
        thinkingLevelMap={"max": "max"},
    )
    history = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            ],
        },
        {
            "role": "assistant",
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-opus-4-6",
            "stopReason": "toolUse",
            "content": [
                {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"},
                {"type": "text", "text": "Running."},
                {"type": "toolCall", "id": "t1", "name": "ls", "arguments": {"path": "."}},
                {"type": "toolCall", "id": "t2", "name": "ls", "arguments": {"path": "/"}},
            ],
        },
        {
            "role": "toolResult",
            "toolCallId": "t1",
            "toolName": "ls",
            "isError": False,
            "content": [{"type": "text", "text": "a.txt"}],
        },
        {
            "role": "toolResult",
            "toolCallId": "t2",
            "toolName": "ls",
            "isError": True,
            "content": [{"type": "text", "text": "denied"}],
        },
        {
            "role": "assistant",
            "stopReason": "error",
            "content": [{"type": "text", "text": "broken"}],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-opus-4-6",
        },
    ]
    ctx = {"systemPrompt": None, "messages": history, "tools": []}
    await collect(stream(model, ctx, StreamOptions(api_key="k", reasoning="max", temperature=0.5)))
    body = sse_server.last_request.body
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["output_config"] == {"effort": "max"}
    assert "temperature" not in body and "system" not in body
    msgs = body["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert msgs[0]["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"},
    }
    assert msgs[1]["content"] == [
        {"type": "thinking", "thinking": "hmm", "signature": "sig"},
        {"type": "text", "text": "Running."},
        {"type": "tool_use", "id": "t1", "name": "ls", "input": {"path": "."}},
        {"type": "tool_use", "id": "t2", "name": "ls", "input": {"path": "/"}},
    ]
    results = msgs[2]["content"]
    assert [r["tool_use_id"] for r in results] == ["t1", "t2"]
    assert results[1]["is_error"] is True
    assert results[-1]["cache_control"] == {"type": "ephemeral"}


@pytest.mark.parametrize(
    ("stop", "reason", "message"),
    [
        ("max_tokens", "length", None),
        ("pause_turn", "stop", None),
        ("refusal", "error", "The model refused to complete the request"),
        ("sensitive", "error", "Provider stopped with: sensitive"),
        ("weird", "error", "Unhandled stop reason: weird"),
    ],
)
async def test_stop_reason_mapping(sse_server: SSEServer, stop: str, reason: str, message: str | None) -> None:
    sse_server.enqueue(text_reply(["x"], stop=stop))
    events = await collect(stream(anthropic_model(sse_server.base_url), SIMPLE_CONTEXT, StreamOptions()))
    msg = final(events)
    assert msg["stopReason"] == reason and msg["rawStopReason"] == stop
    assert msg.get("errorMessage") == message


@pytest.mark.parametrize("status", [429, 500, 529])
async def test_http_errors_read_status_and_body(sse_server: SSEServer, status: int) -> None:
    body = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    sse_server.enqueue(Reply(status=status, body=body))
    events = await collect(stream(anthropic_model(sse_server.base_url), SIMPLE_CONTEXT, StreamOptions()))
    assert types(events) == ["error"]
    msg = final(events)
    assert msg["stopReason"] == "error"
    assert msg["errorMessage"] == f"{status} {body}"


async def test_http_error_without_body(sse_server: SSEServer) -> None:
    sse_server.enqueue(Reply(status=400, body=""))
    events = await collect(stream(anthropic_model(sse_server.base_url), SIMPLE_CONTEXT, StreamOptions()))
    assert final(events)["errorMessage"] == "400 status code (no body)"


async def test_long_error_body_is_trimmed(sse_server: SSEServer) -> None:
    sse_server.enqueue(Reply(status=500, body="x" * 10000))
    events = await collect(stream(anthropic_model(sse_server.base_url), SIMPLE_CONTEXT, StreamOptions()))
    assert len(final(events)["errorMessage"]) <= 4010


async def test_sse_error_event(sse_server: SSEServer) -> None:
    err = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    sse_server.enqueue([*text_reply(["partial"])[:3], f"event: error\ndata: {err}\n\n"])
    events = await collect(stream(anthropic_model(sse_server.base_url), SIMPLE_CONTEXT, StreamOptions()))
    msg = final(events)
    assert msg["stopReason"] == "error" and "overloaded_error" in msg["errorMessage"]


async def test_connection_dropped_mid_stream(sse_server: SSEServer) -> None:
    sse_server.enqueue(Reply(chunks=text_reply(["a", "b", "c"]), drop_after=5))
    events = await collect(stream(anthropic_model(sse_server.base_url), SIMPLE_CONTEXT, StreamOptions()))
    msg = final(events)
    assert msg["stopReason"] == "error"
    assert msg["errorMessage"].startswith("Connection error:")
    assert msg["content"][0]["text"] == "ab"


async def test_clean_close_without_message_stop(sse_server: SSEServer) -> None:
    sse_server.enqueue(text_reply(["a"])[:-1])
    events = await collect(stream(anthropic_model(sse_server.base_url), SIMPLE_CONTEXT, StreamOptions()))
    assert final(events)["errorMessage"] == "Anthropic stream ended before message_stop"


async def test_stalled_server_hits_stream_deadline(sse_server: SSEServer) -> None:
    sse_server.enqueue(Reply(chunks=text_reply(["a", "b"]), stall_after=3))
    started = time.monotonic()
    opts = StreamOptions(stream_deadline_s=0.3)
    events = await collect(stream(anthropic_model(sse_server.base_url), SIMPLE_CONTEXT, opts))
    assert final(events)["errorMessage"] == "stream deadline exceeded"
    assert time.monotonic() - started < 2


async def test_abort_while_waiting_for_first_byte(sse_server: SSEServer) -> None:
    sse_server.enqueue(Reply(stall_before_headers=True))
    signal = asyncio.Event()
    asyncio.get_running_loop().call_later(0.2, signal.set)
    started = time.monotonic()
    events = await collect(stream(anthropic_model(sse_server.base_url), SIMPLE_CONTEXT, StreamOptions(signal=signal)))
    assert types(events) == ["error"]
    msg = final(events)
    assert (msg["stopReason"], msg["errorMessage"]) == ("aborted", "Request was aborted")
    assert events[-1]["reason"] == "aborted"
    assert time.monotonic() - started < 1.5


async def test_abort_mid_text(sse_server: SSEServer) -> None:
    frames = text_reply([f"w{i} " for i in range(50)])
    sse_server.enqueue([frames[0], frames[1], *[(0.05, f) for f in frames[2:]]])
    signal = asyncio.Event()
    events = []
    async for ev in stream(anthropic_model(sse_server.base_url), SIMPLE_CONTEXT, StreamOptions(signal=signal)):
        events.append(ev)
        if ev["type"] == "text_delta" and ev["delta"] == "w1 ":
            signal.set()
    msg = final(events)
    assert msg["stopReason"] == "aborted"
    assert msg["content"][0]["text"].startswith("w0 w1 ")
    assert len([e for e in events if e["type"] == "error"]) == 1


async def test_transport_retry_honours_retry_after_ms(sse_server: SSEServer) -> None:
    sse_server.enqueue(Reply(status=529, body="overloaded", headers={"retry-after-ms": "10"}))
    sse_server.enqueue(text_reply(["ok"]))
    opts = StreamOptions(max_retries=2)
    events = await collect(stream(anthropic_model(sse_server.base_url), SIMPLE_CONTEXT, opts))
    assert final(events)["content"][0]["text"] == "ok"
    assert len(sse_server.requests) == 2


async def test_no_retry_for_400_and_x_should_retry_false(sse_server: SSEServer) -> None:
    sse_server.enqueue(Reply(status=400, body="bad"))
    sse_server.enqueue(Reply(status=503, body="busy", headers={"x-should-retry": "false"}))
    model = anthropic_model(sse_server.base_url)
    first = await collect(stream(model, SIMPLE_CONTEXT, StreamOptions(max_retries=3)))
    second = await collect(stream(model, SIMPLE_CONTEXT, StreamOptions(max_retries=3)))
    assert final(first)["errorMessage"] == "400 bad" and final(second)["errorMessage"] == "503 busy"
    assert len(sse_server.requests) == 2


async def test_retry_delay_above_cap_fails_at_once(sse_server: SSEServer) -> None:
    sse_server.enqueue(Reply(status=429, body="slow down", headers={"retry-after": "120"}))
    opts = StreamOptions(max_retries=3, max_retry_delay_ms=5000)
    events = await collect(stream(anthropic_model(sse_server.base_url), SIMPLE_CONTEXT, opts))
    assert final(events)["errorMessage"] == "Server requested 120s retry delay (max: 5s). 429 slow down"


async def test_connection_refused_is_an_error_event() -> None:
    with SSEServer() as server:
        url = server.base_url
    events = await collect(stream(anthropic_model(url), SIMPLE_CONTEXT, StreamOptions()))
    assert final(events)["errorMessage"].startswith("Connection error:")


AWKWARD = 'quote " backslash \\ nl \n tab \t nul \x00 sep \u2028\u2029 </script> é 漢字 🦀 \\u0041 {"x": 1}'
"""Text that a request body built by hand (or escaped twice, or spliced from kept JSON at the wrong
place) would garble: JSON's own specials, control characters, line separators, non-BMP text and
text that looks like escapes or JSON."""


async def test_history_keeps_json_safe(sse_server: SSEServer) -> None:
    """The request body is strict JSON carrying the history exactly: every awkward string in user
    text, tool-call arguments (keys too, nested, big integers) and tool results arrives as it was."""
    arguments = {"command": AWKWARD, AWKWARD: [AWKWARD, {"n": 2**70, "f": 0.1, "t": True, "z": None}]}
    history = [
        {"role": "user", "content": AWKWARD, "timestamp": 1},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": AWKWARD},
                {"type": "toolCall", "id": "toolu_1", "name": "bash", "arguments": arguments},
            ],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "stopReason": "toolUse",
            "timestamp": 2,
        },
        {
            "role": "toolResult",
            "toolCallId": "toolu_1",
            "toolName": "bash",
            "content": [{"type": "text", "text": AWKWARD}],
            "isError": False,
            "timestamp": 3,
        },
    ]
    sse_server.enqueue(text_reply(["ok"]))
    sse_server.enqueue(text_reply(["ok"]))
    model = anthropic_model(sse_server.base_url)
    client = new_http_client()  # the host's shared client: the second request is sent from what the
    try:  # first one taught it (a request template and the body encoded by the host, not by httpx)
        for _ in range(2):
            context = {**SIMPLE_CONTEXT, "messages": history}
            events = await collect(stream(model, context, StreamOptions(http_client=client)))
            assert final(events)["stopReason"] == "stop"
    finally:
        await client.aclose()
    for request in sse_server.requests:
        body = request.body
        assert isinstance(body, dict), "the server could not parse the request body as JSON"
        # strict JSON: encoding what was received again gives no NaN/Infinity and the same value
        assert json.loads(json.dumps(body, allow_nan=False)) == body
        user, assistant, results = body["messages"]
        assert user["content"][0]["text"] == AWKWARD
        assert assistant["content"][0] == {"type": "text", "text": AWKWARD}
        assert assistant["content"][1] == {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": arguments}
        assert results["content"][0]["content"] == [{"type": "text", "text": AWKWARD}]
