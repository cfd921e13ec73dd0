"""openai-responses adapter against a local server speaking the Responses API SSE."""

from __future__ import annotations

import json

import pytest
from helpers import SIMPLE_CONTEXT, collect, final, openai_model, types

from atomic_host.contract.providers import StreamOptions
from atomic_host.testing_sse import SSEServer, responses_frames
from builtin_plugins.providers.openai_responses import stream

REASONING_ITEM = {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "gAAA"}


def completed(status: str = "completed", **extra: object) -> dict:
    return {
        "type": f"response.{status}" if status != "incomplete" else "response.incomplete",
        "response": {
            "id": "resp_1",
            "status": status,
            "usage": {
                "input_tokens": 1000,
                "input_tokens_details": {"cached_tokens": 800},
                "output_tokens": 200,
                "output_tokens_details": {"reasoning_tokens": 50},
                "total_tokens": 1200,
            },
            **extra,
        },
    }


def full_reply() -> list[str]:
    done_reasoning = {**REASONING_ITEM, "summary": [{"type": "summary_text", "text": "Plan it."}]}
    fc = {"id": "fc_9", "type": "function_call", "call_id": "call_9", "name": "bash", "arguments": ""}
    return responses_frames(
        [
            {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
            {"type": "response.output_item.added", "output_index": 0, "item": REASONING_ITEM},
            {
                "type": "response.reasoning_summary_text.delta",
                "output_index": 0,
                "summary_index": 0,
                "delta": "Plan",
            },
            {
                "type": "response.reasoning_summary_text.delta",
                "output_index": 0,
                "summary_index": 0,
                "delta": " it.",
            },
            {"type": "response.reasoning_summary_part.done", "output_index": 0, "summary_index": 0},
            {"type": "response.output_item.done", "output_index": 0, "item": done_reasoning},
            {
                "type": "response.output_item.added",
                "output_index": 1,
                "item": {"id": "msg_1", "type": "message", "role": "assistant", "content": []},
            },
            {"type": "response.output_text.delta", "output_index": 1, "content_index": 0, "delta": "Running"},
            {"type": "response.output_text.delta", "output_index": 1, "content_index": 0, "delta": " it."},
            {
                "type": "response.output_item.done",
                "output_index": 1,
                "item": {
                    "id": "msg_1",
                    "type": "message",
                    "content": [{"type": "output_text", "text": "Running it."}],
                },
            },
            {"type": "response.output_item.added", "output_index": 2, "item": fc},
            {
                "type": "response.function_call_arguments.delta",
                "output_index": 2,
                "item_id": "fc_9",
                "delta": '{"command"',
            },
            {
                "type": "response.function_call_arguments.delta",
                "output_index": 2,
                "item_id": "fc_9",
                "delta": ': "ls',
            },
            {
                "type": "response.function_call_arguments.done",
                "output_index": 2,
                "item_id": "fc_9",
                "arguments": '{"command": "ls"}',
            },
            {
                "type": "response.output_item.done",
                "output_index": 2,
                "item": {**fc, "arguments": '{"command": "ls"}', "status": "completed"},
            },
            completed(),
        ]
    )


async def test_reasoning_text_and_function_call(sse_server: SSEServer) -> None:
    sse_server.enqueue(full_reply())
    model = openai_model(sse_server.base_url, api="openai-responses", id="gpt-5")
    ctx = {
        **SIMPLE_CONTEXT,
        "tools": [{"name": "bash", "description": "Run", "parameters": {"type": "object"}}],
    }
    events = await collect(stream(model, ctx, StreamOptions(api_key="sk-r", reasoning="medium", session_id="s1")))
    assert types(events)[:5] == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_delta",
        "thinking_end",
    ]
    msg = final(events)
    thinking, text, call = msg["content"]
    assert thinking["thinking"] == "Plan it."  # no blank line after the last summary part
    assert json.loads(thinking["thinkingSignature"])["encrypted_content"] == "gAAA"
    assert text == {"type": "text", "text": "Running it.", "textSignature": "msg_1"}
    assert call == {"type": "toolCall", "id": "call_9|fc_9", "name": "bash", "arguments": {"command": "ls"}}
    deltas = "".join(e["delta"] for e in events if e["type"] == "toolcall_delta")
    assert deltas == '{"command": "ls"}'  # the .done event supplied only the missing suffix
    assert events[-1]["reason"] == "toolUse" and msg["responseId"] == "resp_1"
    usage = msg["usage"]
    assert (usage["input"], usage["cacheRead"], usage["output"], usage["totalTokens"]) == (
        200,
        800,
        200,
        1200,
    )
    assert usage["reasoning"] == 50

    req = sse_server.last_request
    assert req.path == "/responses" and req.headers["authorization"] == "Bearer sk-r"
    body = req.body
    assert body["stream"] is True and body["store"] is False
    assert body["reasoning"] == {"effort": "medium", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["prompt_cache_key"] == "s1"
    assert body["tools"][0] == {
        "type": "function",
        "name": "bash",
        "description": "Run",
        "parameters": {"type": "object"},
        "strict": False,
    }
    assert body["input"] == [
        {"role": "developer", "content": "You are terse."},
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
    ]


async def test_replay_of_previous_turn(sse_server: SSEServer) -> None:
    sse_server.enqueue(full_reply())
    model = openai_model(sse_server.base_url, api="openai-responses", id="gpt-5")
    first = final(await collect(stream(model, SIMPLE_CONTEXT, StreamOptions(reasoning="low"))))
    result = {
        "role": "toolResult",
        "toolCallId": "call_9|fc_9",
        "toolName": "bash",
        "isError": False,
        "content": [{"type": "text", "text": "a b"}],
    }
    sse_server.enqueue(responses_frames([completed()]))
    ctx = {**SIMPLE_CONTEXT, "messages": [*SIMPLE_CONTEXT["messages"], first, result]}
    await collect(stream(model, ctx, StreamOptions(reasoning="low")))
    items = sse_server.last_request.body["input"][2:]
    assert items[0]["type"] == "reasoning" and items[0]["encrypted_content"] == "gAAA"
    assert items[1]["type"] == "message" and items[1]["id"] == "msg_1"
    assert items[2] == {
        "type": "function_call",
        "call_id": "call_9",
        "name": "bash",
        "arguments": '{"command": "ls"}',
        "id": "fc_9",
    }
    assert items[3] == {"type": "function_call_output", "call_id": "call_9", "output": "a b"}


async def test_service_tier_scales_cost(sse_server: SSEServer) -> None:
    sse_server.enqueue(responses_frames([completed(service_tier="flex")]))
    model = openai_model(sse_server.base_url, api="openai-responses")
    msg = final(await collect(stream(model, SIMPLE_CONTEXT, StreamOptions())))
    base = (1.25 * 200 + 10 * 200 + 0.125 * 800) / 1e6
    assert msg["usage"]["cost"]["total"] == pytest.approx(base * 0.5)
    assert msg["stopReason"] == "stop"


@pytest.mark.parametrize(
    ("event", "reason", "error"),
    [
        (completed("incomplete", incomplete_details={"reason": "max_output_tokens"}), "length", None),
        (
            completed("incomplete", incomplete_details={"reason": "content_filter"}),
            "error",
            "Response incomplete: content_filter",
        ),
        (
            {
                "type": "response.failed",
                "response": {"status": "failed", "error": {"code": "server_error", "message": "oops"}},
            },
            "error",
            "server_error: oops",
        ),
        (
            {"type": "error", "code": "rate_limit_exceeded", "message": "slow down"},
            "error",
            "Error Code rate_limit_exceeded: slow down",
        ),
    ],
)
async def test_terminal_events(sse_server: SSEServer, event: dict, reason: str, error: str | None) -> None:
    sse_server.enqueue(responses_frames([event]))
    model = openai_model(sse_server.base_url, api="openai-responses")
    msg = final(await collect(stream(model, SIMPLE_CONTEXT, StreamOptions())))
    assert msg["stopReason"] == reason and msg.get("errorMessage") == error


async def test_stream_without_terminal_event(sse_server: SSEServer) -> None:
    sse_server.enqueue(responses_frames([{"type": "response.created", "response": {"id": "r"}}]))
    model = openai_model(sse_server.base_url, api="openai-responses")
    msg = final(await collect(stream(model, SIMPLE_CONTEXT, StreamOptions())))
    assert msg["errorMessage"] == "OpenAI Responses stream ended before a terminal response event"


async def test_reasoning_off(sse_server: SSEServer) -> None:
    sse_server.enqueue(responses_frames([completed()]))
    model = openai_model(sse_server.base_url, api="openai-responses")
    await collect(stream(model, SIMPLE_CONTEXT, StreamOptions(max_tokens=5)))
    body = sse_server.last_request.body
    assert body["reasoning"] == {"effort": "none"} and body["max_output_tokens"] == 16
