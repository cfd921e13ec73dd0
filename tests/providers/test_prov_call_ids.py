"""Tool-call ids within one assistant message are unique: as a reply streams (``AssistantStream``)
and when a history that has repeats (written before, or by another program) is sent again, where
each result goes with the call it answered, in order, on every API's request builder."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from atomic_host.kit.llm.stream import AssistantStream
from atomic_host.kit.messages import convert_to_llm
from builtin_plugins.providers.anthropic import convert_messages as anthropic_messages
from builtin_plugins.providers.openai_completions import convert_messages as chat_messages
from builtin_plugins.providers.openai_completions import resolve_compat
from builtin_plugins.providers.openai_responses import convert_input

IDS = st.lists(st.sampled_from(["", "a", "a_2", "b", "call", "call_2", "x|y"]) | st.text(max_size=5), max_size=8)


@given(IDS)
def test_streamed_ids_are_unique_and_derived_from_the_servers(ids: list[str]) -> None:
    out = AssistantStream({"id": "m", "provider": "p", "api": "a"})
    given_ids = [out.content[out.toolcall_start(call_id, "bash")[0]]["id"] for call_id in ids]
    assert len(set(given_ids)) == len(given_ids) and all(given_ids)
    assert all(got.startswith(call_id or "call") for call_id, got in zip(ids, given_ids, strict=True))
    if len(set(ids)) == len(ids) and all(ids):
        assert given_ids == ids  # nothing to change: the server's ids as they are


def _history(api: str) -> list[dict[str, Any]]:
    calls = [{"type": "toolCall", "id": "dup", "name": "bash", "arguments": {"command": f"echo {n}"}} for n in (1, 2)]
    results = [
        {"role": "toolResult", "toolCallId": "dup", "toolName": "bash",
         "content": [{"type": "text", "text": f"out {n}"}], "isError": False, "timestamp": 2}
        for n in (1, 2)
    ]  # fmt: skip
    assistant = {"role": "assistant", "content": calls, "api": api, "provider": "p", "model": "m",
                 "stopReason": "toolUse", "timestamp": 1}  # fmt: skip
    return [{"role": "user", "content": "go", "timestamp": 0}, assistant, *results]


def _model(api: str) -> dict[str, Any]:
    return {"id": "m", "provider": "p", "api": api, "input": ["text"]}


def test_every_api_gets_unique_pairs_from_such_a_history() -> None:
    for api in ("anthropic-messages", "openai-completions", "openai-responses"):
        messages = convert_to_llm(_history(api))
        model = _model(api)
        if api == "anthropic-messages":
            out = [b for m in anthropic_messages(messages, model, None) for b in m["content"]]
            calls = [(b["id"], b["input"]["command"]) for b in out if b["type"] == "tool_use"]
            results = [(b["tool_use_id"], b["content"][0]["text"]) for b in out if b["type"] == "tool_result"]
        elif api == "openai-completions":
            out = chat_messages({"messages": messages}, model, resolve_compat(model))
            calls = [(c["id"], c["function"]["arguments"]) for m in out for c in m.get("tool_calls") or []]
            calls = [(i, "echo " + a.split("echo ")[1].rstrip('"}')) for i, a in calls]
            results = [(m["tool_call_id"], m["content"]) for m in out if m["role"] == "tool"]
        else:
            out = convert_input({"messages": messages}, model)
            calls = [(i["call_id"], "echo " + i["arguments"].split("echo ")[1].rstrip('"}')) for i in out
                     if i.get("type") == "function_call"]  # fmt: skip
            results = [(i["call_id"], i["output"]) for i in out if i.get("type") == "function_call_output"]
        assert calls == [("dup", "echo 1"), ("dup_2", "echo 2")], api
        assert results == [("dup", "out 1"), ("dup_2", "out 2")], api
