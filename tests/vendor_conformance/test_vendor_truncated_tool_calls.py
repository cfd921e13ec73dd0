"""A tool call cut off by the output-token limit is never run; the model is told to re-issue it.

Each fixture cuts a ``bash`` call inside ``{"command": "touch ran-anyway``. The half-received JSON
still parses to a usable command, so a host that ran it would create the file ``ran-anyway``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from vendor_helpers import assistants, blocks, of_type, stream_reply, text_of, tool_results

CASES = [
    ("anthropic-messages", "anthropic/max_tokens_in_tool.sse", "anthropic/answer.sse", "max_tokens"),
    ("openai-completions", "openai_chat/length_in_tool_call.sse", "openai_chat/answer.sse", "length"),
    (
        "openai-responses",
        "openai_responses/incomplete_in_function_call.sse",
        "openai_responses/answer.sse",
        "incomplete.max_output_tokens",
    ),
]


def _told_in_next_request(api: str, body: dict[str, Any]) -> str:
    """The text of the tool result the follow-up request sent for the cut-off call."""
    if api == "anthropic-messages":
        result = body["messages"][-1]["content"][0]
        assert result["type"] == "tool_result" and result["is_error"] is True
        return result["content"][0]["text"]
    if api == "openai-completions":
        (result,) = [m for m in body["messages"] if m["role"] == "tool"]
        return result["content"]
    (result,) = [i for i in body["input"] if i.get("type") == "function_call_output"]
    return result["output"]


@pytest.mark.parametrize(("api", "cut", "answer", "raw"), CASES)
async def test_cut_off_tool_call_is_not_run_and_the_model_is_told(
    vendor_host: Any, sse_server: Any, api: str, cut: str, answer: str, raw: str
) -> None:
    sse_server.enqueue(stream_reply(cut))
    sse_server.enqueue(stream_reply(answer))
    async with vendor_host(api) as host:
        events = await host.client.prompt_and_wait("write the file")
        first, second = assistants(events)
        assert first["stopReason"] == "length" and first["rawStopReason"] == raw
        (call,) = blocks(first, "toolCall")
        assert call["name"] == "bash"
        assert not (host.cwd / "ran-anyway").exists(), "the truncated command ran"
        (start,) = of_type(events, "tool_execution_start")
        (end,) = of_type(events, "tool_execution_end")
        assert start["toolCallId"] == end["toolCallId"] == call["id"]
        assert end["isError"] is True
        expected = (
            'Tool call "bash" was not executed: the response hit the output token limit, so its arguments '
            "may be truncated. Re-issue the tool call with complete arguments."
        )
        assert end["result"]["content"] == [{"type": "text", "text": expected}]
        (result,) = tool_results(events)
        assert result["isError"] is True and result["toolCallId"] == call["id"]
        assert result["content"][0]["text"] == expected
        # The run went on: the model got the error result in the next request and answered.
        assert _told_in_next_request(api, sse_server.requests[1].body) == expected
        assert text_of(second) == "All done."
        assert of_type(events, "auto_retry_start") == [] and of_type(events, "compaction_start") == []
        # The failed call is in the session like any other tool result.
        messages = (await host.client.get_messages()).messages
        assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "assistant"]
        assert json.dumps(messages[2]["content"]).count("not executed") == 1
