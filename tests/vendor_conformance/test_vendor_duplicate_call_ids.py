"""Two tool calls of one reply with the same id: both run, and the next request carries each call
with exactly its own result (ids made unique), on every API.

A server that numbers calls per reply (``call_0``), or a proxy that merges two replies, can give two
calls one id. Both ran, but the follow-up request then held two calls and two results under one id
(Anthropic and OpenAI reject that, or pair the results wrongly) and the session kept them so.
"""

from __future__ import annotations

from typing import Any

import pytest
from vendor_helpers import NO_RETRY, assistants, blocks, of_type, stream_reply, text_of, tool_results

from atomic_host import testing_sse as sse

COMMANDS = ["echo first >> out.txt", "echo second >> out.txt"]


def _anthropic(call_id: str) -> list[str]:
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg_dup", "usage": {"input_tokens": 50, "output_tokens": 1}}}
    ]
    for index, command in enumerate(COMMANDS):
        events += [
            {"type": "content_block_start", "index": index,
             "content_block": {"type": "tool_use", "id": call_id, "name": "bash", "input": {}}},
            {"type": "content_block_delta", "index": index,
             "delta": {"type": "input_json_delta", "partial_json": f'{{"command": "{command}"}}'}},
            {"type": "content_block_stop", "index": index},
        ]  # fmt: skip
    events += [
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 40}},
        {"type": "message_stop"},
    ]
    return sse.anthropic_frames(events)


def _chat(call_id: str) -> list[str]:
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
            {"index": index, "id": call_id, "type": "function",
             "function": {"name": "bash", "arguments": f'{{"command": "{command}"}}'}}]}, "finish_reason": None}]}
        for index, command in enumerate(COMMANDS)
    ]  # fmt: skip
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return sse.openai_chat_frames(chunks)


def _responses(call_id: str, item_id: str = "") -> list[str]:
    events: list[dict[str, Any]] = [{"type": "response.created", "response": {"id": "resp_dup"}}]
    for index, command in enumerate(COMMANDS):
        item = {"id": item_id or f"fc_{index}", "type": "function_call", "call_id": call_id, "name": "bash",
                "arguments": ""}  # fmt: skip
        args = f'{{"command": "{command}"}}'
        events += [
            {"type": "response.output_item.added", "output_index": index, "item": item},
            {"type": "response.function_call_arguments.delta", "output_index": index, "delta": args},
            {"type": "response.output_item.done", "output_index": index, "item": {**item, "arguments": args}},
        ]
    events.append({"type": "response.completed", "response": {"id": "resp_dup", "status": "completed"}})
    return sse.responses_frames(events)


def _pairs(api: str, body: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(the ids of the calls, the ids of the results) the follow-up request carried."""
    if api == "anthropic-messages":
        content = [b for m in body["messages"] for b in m["content"]]
        calls = [b["id"] for b in content if b["type"] == "tool_use"]
        return calls, [b["tool_use_id"] for b in content if b["type"] == "tool_result"]
    if api == "openai-completions":
        calls = [c["id"] for m in body["messages"] for c in m.get("tool_calls") or []]
        return calls, [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]
    items = body["input"]
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    item_ids = [i["id"] for i in items if i.get("type") == "function_call" and "id" in i]
    assert len(set(item_ids)) == len(item_ids), item_ids
    return calls, [i["call_id"] for i in items if i.get("type") == "function_call_output"]


CASES = [
    ("anthropic-messages", _anthropic("toolu_dup"), "anthropic/answer.sse"),
    ("openai-completions", _chat("call_0"), "openai_chat/answer.sse"),
    ("openai-responses", _responses("call_dup"), "openai_responses/answer.sse"),
    ("openai-responses", _responses("call_dup", "fc_dup"), "openai_responses/answer.sse"),
]


@pytest.mark.parametrize(("api", "reply", "answer"), CASES, ids=["anthropic", "chat", "responses", "responses-items"])
async def test_each_call_has_exactly_its_result_in_the_next_request(
    vendor_host: Any, sse_server: Any, api: str, reply: list[str], answer: str
) -> None:
    sse_server.enqueue(reply)
    sse_server.enqueue(stream_reply(answer))
    async with vendor_host(api, settings=NO_RETRY) as host:
        events = await host.client.prompt_and_wait("run both", timeout=60)
        first, second = assistants(events)
        assert text_of(second) == "All done."
        calls = blocks(first, "toolCall")
        assert [c["arguments"]["command"] for c in calls] == COMMANDS
        ids = [c["id"] for c in calls]
        assert len(set(ids)) == 2, ids
        # Both ran, each reported under its own id.
        assert (host.cwd / "out.txt").read_text().splitlines() in (["first", "second"], ["second", "first"])
        assert sorted(e["toolCallId"] for e in of_type(events, "tool_execution_end")) == sorted(ids)
        assert [r["toolCallId"] for r in tool_results(events)] == ids
        assert all(not r["isError"] for r in tool_results(events))
        sent_calls, sent_results = _pairs(api, sse_server.requests[1].body)
        assert len(set(sent_calls)) == 2 and sorted(sent_calls) == sorted(sent_results), (sent_calls, sent_results)
        # The session keeps them so: the next prompt's request pairs them the same way.
        sse_server.enqueue(stream_reply(answer))
        await host.client.prompt_and_wait("again", timeout=60)
        sent_calls, sent_results = _pairs(api, sse_server.requests[2].body)
        assert len(set(sent_calls)) == 2 and sorted(sent_calls) == sorted(sent_results), (sent_calls, sent_results)
