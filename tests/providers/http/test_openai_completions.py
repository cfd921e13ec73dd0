"""openai-completions adapter against a local server speaking OpenAI's chat-completions SSE."""

from __future__ import annotations

import asyncio

import pytest
from helpers import SIMPLE_CONTEXT, collect, final, openai_model, types

from atomic_host.contract.providers import StreamOptions
from atomic_host.testing_sse import Reply, SSEServer, openai_chat_frames
from builtin_plugins.providers.openai_completions import stream


def chunk(delta: dict | None = None, finish: str | None = None, **extra: object) -> dict:
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test"}
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {**base, "choices": choices, **extra}


USAGE = {
    "usage": {
        "prompt_tokens": 1200,
        "completion_tokens": 300,
        "total_tokens": 1500,
        "prompt_tokens_details": {"cached_tokens": 1000},
        "completion_tokens_details": {"reasoning_tokens": 100},
    }
}


async def test_text_reasoning_content_and_usage_chunk(sse_server: SSEServer) -> None:
    sse_server.enqueue(
        openai_chat_frames(
            [
                chunk({"role": "assistant", "content": ""}),
                chunk({"reasoning_content": "Think"}),
                chunk({"reasoning_content": "ing."}),
                chunk({"content": "Hi "}),
                chunk({"content": "there"}),
                chunk({}, finish="stop"),
                chunk(None, **USAGE),
            ]
        )
    )
    model = openai_model(sse_server.base_url)
    opts = StreamOptions(api_key="sk-test", reasoning="high", max_tokens=1000)
    events = await collect(stream(model, SIMPLE_CONTEXT, opts))
    assert types(events) == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    msg = final(events)
    assert msg["content"] == [
        {"type": "thinking", "thinking": "Thinking.", "thinkingSignature": "reasoning_content"},
        {"type": "text", "text": "Hi there"},
    ]
    assert msg["stopReason"] == "stop" and msg["responseId"] == "chatcmpl-1"
    usage = msg["usage"]
    assert (usage["input"], usage["cacheRead"], usage["output"], usage["reasoning"]) == (200, 1000, 300, 100)
    assert usage["totalTokens"] == 1500
    assert usage["cost"]["total"] == pytest.approx((1.25 * 200 + 10 * 300 + 0.125 * 1000) / 1e6)

    req = sse_server.last_request
    assert req.path == "/chat/completions"
    assert req.headers["authorization"] == "Bearer sk-test"
    body = req.body
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["reasoning_effort"] == "high"
    assert body["max_completion_tokens"] == 1000
    assert body["store"] is False
    assert body["messages"] == [
        {"role": "developer", "content": "You are terse."},
        {"role": "user", "content": "hi"},
    ]


async def test_tool_call_deltas_by_index(sse_server: SSEServer) -> None:
    call0 = {"index": 0, "id": "call_a", "type": "function", "function": {"name": "read", "arguments": ""}}
    call1 = {"index": 1, "id": "call_b", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
    sse_server.enqueue(
        openai_chat_frames(
            [
                chunk({"role": "assistant", "content": None, "tool_calls": [call0]}),
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"pa'}}]}),
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'th": "a.py"'}}]}),
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]}),
                chunk({"tool_calls": [call1]}),
                chunk({}, finish="tool_calls"),
                chunk(None, usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}),
            ]
        )
    )
    tools = [{"name": "read", "description": "Read a file", "parameters": {"type": "object"}}]
    ctx = {**SIMPLE_CONTEXT, "tools": tools}
    events = await collect(stream(openai_model(sse_server.base_url), ctx, StreamOptions(api_key="k")))
    msg = final(events)
    assert events[-1]["reason"] == "toolUse" and msg["rawStopReason"] == "tool_calls"
    assert msg["content"] == [
        {"type": "toolCall", "id": "call_a", "name": "read", "arguments": {"path": "a.py"}},
        {"type": "toolCall", "id": "call_b", "name": "ls", "arguments": {}},
    ]
    partial_args = [e["partial"]["content"][0]["arguments"] for e in events if e["type"] == "toolcall_delta"]
    assert partial_args[0] == {"path": "a.py"}  # the partial dict is shared; final state seen everywhere
    assert [e["contentIndex"] for e in events if e["type"] == "toolcall_end"] == [0, 1]
    assert sse_server.last_request.body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read",
                "description": "Read a file",
                "parameters": {"type": "object"},
                "strict": False,
            },
        }
    ]


async def test_llama_cpp_style_server_with_compat(sse_server: SSEServer) -> None:
    sse_server.enqueue(
        openai_chat_frames(
            [
                chunk({"reasoning": "hmm"}),
                chunk({"content": "ok"}),
                chunk({}, finish="stop", usage={"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}),
            ]
        )
    )
    model = openai_model(
        sse_server.base_url,
        provider="llama-cpp",
        compat={
            "supportsUsageInStreaming": False,
            "maxTokensField": "max_tokens",
            "supportsDeveloperRole": False,
            "supportsReasoningEffort": False,
            "thinkingTokenBudgetField": "thinking_budget_tokens",
        },
    )
    events = await collect(stream(model, SIMPLE_CONTEXT, StreamOptions(api_key="none", reasoning="low")))
    msg = final(events)
    assert msg["content"][0]["thinkingSignature"] == "reasoning"
    assert msg["usage"]["input"] == 7 and msg["usage"]["output"] == 2
    body = sse_server.last_request.body
    assert "stream_options" not in body and "reasoning_effort" not in body
    assert body["max_tokens"] > 0 and "max_completion_tokens" not in body
    assert body["messages"][0]["role"] == "system"
    assert body["thinking_budget_tokens"] == 2048 - 1024


async def test_history_conversion(sse_server: SSEServer) -> None:
    sse_server.enqueue(openai_chat_frames([chunk({"content": "k"}, finish="stop")]))
    model = openai_model(sse_server.base_url)
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "see"},
                {"type": "image", "data": "QQ==", "mimeType": "image/jpeg"},
            ],
        },
        {
            "role": "assistant",
            "api": "openai-completions",
            "provider": "openai",
            "model": "gpt-test",
            "stopReason": "toolUse",
            "content": [
                {"type": "thinking", "thinking": "plan", "thinkingSignature": "reasoning_content"},
                {"type": "text", "text": "Reading."},
                {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "x"}},
            ],
        },
        {
            "role": "toolResult",
            "toolCallId": "call_1",
            "toolName": "read",
            "isError": False,
            "content": [{"type": "text", "text": "data"}],
        },
    ]
    await collect(stream(model, {"systemPrompt": None, "messages": messages, "tools": []}, StreamOptions()))
    sent = sse_server.last_request.body["messages"]
    assert sent[0]["content"][1] == {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,QQ=="}}
    assert sent[1] == {
        "role": "assistant",
        "reasoning_content": "plan",
        "content": "Reading.",
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": '{"path": "x"}'}}
        ],
    }
    assert sent[2] == {"role": "tool", "tool_call_id": "call_1", "content": "data"}


@pytest.mark.parametrize(
    ("finish", "reason", "error"),
    [
        ("length", "length", None),
        ("content_filter", "error", "Provider finish_reason: content_filter"),
        (None, "error", "Stream ended without finish_reason"),
    ],
)
async def test_finish_reasons(sse_server: SSEServer, finish: str | None, reason: str, error: str | None) -> None:
    sse_server.enqueue(openai_chat_frames([chunk({"content": "x"}), chunk({}, finish=finish)]))
    events = await collect(stream(openai_model(sse_server.base_url), SIMPLE_CONTEXT, StreamOptions()))
    msg = final(events)
    assert msg["stopReason"] == reason and msg.get("errorMessage") == error


async def test_missing_finish_reason_allowed_by_compat(sse_server: SSEServer) -> None:
    sse_server.enqueue(openai_chat_frames([chunk({"content": "x"})], done=False))
    model = openai_model(sse_server.base_url, compat={"supportsFinishReason": False})
    events = await collect(stream(model, SIMPLE_CONTEXT, StreamOptions()))
    assert final(events)["stopReason"] == "stop"


async def test_error_chunk_and_http_error(sse_server: SSEServer) -> None:
    sse_server.enqueue(openai_chat_frames([chunk({"content": "x"}), {"error": {"message": "boom", "code": 502}}]))
    body = '{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}'
    sse_server.enqueue(Reply(status=429, body=body))
    model = openai_model(sse_server.base_url)
    first = final(await collect(stream(model, SIMPLE_CONTEXT, StreamOptions())))
    second = final(await collect(stream(model, SIMPLE_CONTEXT, StreamOptions())))
    assert first["errorMessage"] == "502: boom"
    assert second["errorMessage"] == f"429 {body}"


async def test_abort_mid_text_and_drop(sse_server: SSEServer) -> None:
    frames = openai_chat_frames([chunk({"content": f"t{i}"}) for i in range(40)])
    sse_server.enqueue([frames[0], *[(0.05, f) for f in frames[1:]]])
    signal = asyncio.Event()
    events = []
    async for ev in stream(openai_model(sse_server.base_url), SIMPLE_CONTEXT, StreamOptions(signal=signal)):
        events.append(ev)
        if ev["type"] == "text_delta":
            signal.set()
    assert final(events)["stopReason"] == "aborted" and final(events)["content"][0]["text"] == "t0"

    sse_server.enqueue(Reply(chunks=frames, drop_after=3))
    dropped = final(await collect(stream(openai_model(sse_server.base_url), SIMPLE_CONTEXT, StreamOptions())))
    assert dropped["stopReason"] == "error" and dropped["errorMessage"].startswith("Connection error:")


async def test_shared_http_client_is_used_and_left_open(sse_server: SSEServer) -> None:
    import httpx

    sse_server.enqueue(openai_chat_frames([chunk({"content": "a"}, finish="stop")]))
    sse_server.enqueue(openai_chat_frames([chunk({"content": "b"}, finish="stop")]))
    async with httpx.AsyncClient() as client:
        opts = StreamOptions(http_client=client, headers={"x-extra": "1"})
        for expected in ("a", "b"):
            msg = final(await collect(stream(openai_model(sse_server.base_url), SIMPLE_CONTEXT, opts)))
            assert msg["content"][0]["text"] == expected
        assert not client.is_closed
    assert sse_server.last_request.headers["x-extra"] == "1"
