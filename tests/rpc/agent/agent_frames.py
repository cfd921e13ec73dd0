"""SSE scripts for the three wire APIs: a thinking + text + tool call reply, and a plain text reply."""

from __future__ import annotations

import json
from typing import Any

from agent_sse import sse

# The tool call's JSON arguments, split mid-token across deltas.
ARG_PARTS = ['{"comm', 'and": "echo hel', 'lo-e2e"}']


def _anthropic_start(input_tokens: int = 100) -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "m1",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1},
        },
    }


def anthropic_tool_reply() -> list[str]:
    ev: list[dict[str, Any]] = [
        _anthropic_start(),
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "Let me "},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "check."},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "c2ln"},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Running "}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "it."}},
        {"type": "content_block_stop", "index": 1},
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}},
        },
        *[
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "input_json_delta", "partial_json": p},
            }
            for p in ARG_PARTS
        ],
        {"type": "content_block_stop", "index": 2},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 40}},
        {"type": "message_stop"},
    ]
    return sse.anthropic_frames(ev)


def anthropic_text_reply(text: str) -> list[str]:
    half = len(text) // 2
    ev = [
        _anthropic_start(200),
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text[:half]}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text[half:]}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 7}},
        {"type": "message_stop"},
    ]
    return sse.anthropic_frames(ev)


def _chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m1"}
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {**base, "choices": choices, **extra}


def chat_tool_reply() -> list[str]:
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "bash", "arguments": ""}}
    return sse.openai_chat_frames(
        [
            _chunk({"role": "assistant", "content": ""}),
            _chunk({"reasoning_content": "Let me "}),
            _chunk({"reasoning_content": "check."}),
            _chunk({"content": "Running "}),
            _chunk({"content": "it."}),
            _chunk({"tool_calls": [call]}),
            *[_chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in ARG_PARTS],
            _chunk({}, finish="tool_calls"),
            _chunk(None, usage={"prompt_tokens": 100, "completion_tokens": 40, "total_tokens": 140}),
        ]
    )


def chat_text_reply(text: str, pieces: int = 2, delay: float = 0.0) -> list[Any]:
    size = max(1, -(-len(text) // pieces))
    parts = [text[i : i + size] for i in range(0, len(text), size)]
    frames: list[Any] = sse.openai_chat_frames(
        [
            _chunk({"role": "assistant", "content": ""}),
            *[_chunk({"content": p}) for p in parts],
            _chunk({}, finish="stop"),
            _chunk(None, usage={"prompt_tokens": 200, "completion_tokens": 7, "total_tokens": 207}),
        ]
    )
    return [(delay, f) for f in frames] if delay else frames


def _completed() -> dict[str, Any]:
    usage = {"input_tokens": 100, "output_tokens": 40, "total_tokens": 140}
    return {"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "usage": usage}}


def responses_tool_reply() -> list[str]:
    reasoning = {"id": "rs_1", "type": "reasoning", "summary": []}
    fc = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "bash", "arguments": ""}
    args = "".join(ARG_PARTS)
    return sse.responses_frames(
        [
            {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
            {"type": "response.output_item.added", "output_index": 0, "item": reasoning},
            {
                "type": "response.reasoning_summary_text.delta",
                "output_index": 0,
                "summary_index": 0,
                "delta": "Let me ",
            },
            {
                "type": "response.reasoning_summary_text.delta",
                "output_index": 0,
                "summary_index": 0,
                "delta": "check.",
            },
            {"type": "response.reasoning_summary_part.done", "output_index": 0, "summary_index": 0},
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {**reasoning, "summary": [{"type": "summary_text", "text": "Let me check."}]},
            },
            {
                "type": "response.output_item.added",
                "output_index": 1,
                "item": {"id": "msg_1", "type": "message", "role": "assistant", "content": []},
            },
            {
                "type": "response.output_text.delta",
                "output_index": 1,
                "content_index": 0,
                "delta": "Running ",
            },
            {"type": "response.output_text.delta", "output_index": 1, "content_index": 0, "delta": "it."},
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
            *[
                {
                    "type": "response.function_call_arguments.delta",
                    "output_index": 2,
                    "item_id": "fc_1",
                    "delta": p,
                }
                for p in ARG_PARTS
            ],
            {
                "type": "response.function_call_arguments.done",
                "output_index": 2,
                "item_id": "fc_1",
                "arguments": args,
            },
            {"type": "response.output_item.done", "output_index": 2, "item": {**fc, "arguments": args}},
            _completed(),
        ]
    )


def responses_text_reply(text: str) -> list[str]:
    half = len(text) // 2
    return sse.responses_frames(
        [
            {"type": "response.created", "response": {"id": "resp_2", "status": "in_progress"}},
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {"id": "msg_2", "type": "message", "role": "assistant", "content": []},
            },
            {
                "type": "response.output_text.delta",
                "output_index": 0,
                "content_index": 0,
                "delta": text[:half],
            },
            {
                "type": "response.output_text.delta",
                "output_index": 0,
                "content_index": 0,
                "delta": text[half:],
            },
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {
                    "id": "msg_2",
                    "type": "message",
                    "content": [{"type": "output_text", "text": text}],
                },
            },
            _completed(),
        ]
    )


TOOL_REPLIES = {
    "anthropic-messages": anthropic_tool_reply,
    "openai-completions": chat_tool_reply,
    "openai-responses": responses_tool_reply,
}
TEXT_REPLIES = {
    "anthropic-messages": anthropic_text_reply,
    "openai-completions": chat_text_reply,
    "openai-responses": responses_text_reply,
}


def models_json(base_url: str, apis: list[str], reasoning: bool = True) -> str:
    """models.json with one provider ``local-<api>`` (model ``m1``) per API, all at ``base_url``."""
    providers = {
        f"local-{api}": {
            "baseUrl": base_url,
            "api": api,
            "apiKey": "dummy-key-123",
            "models": [{"id": "m1", "reasoning": reasoning, "cost": {"input": 1, "output": 2}}],
        }
        for api in apis
    }
    return json.dumps({"providers": providers})
