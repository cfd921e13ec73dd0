"""A tool call cut off by the output-token limit is never run; the model is told to re-issue it.

Each fixture cuts a ``bash`` call inside ``{"command": "touch ran-anyway``. The half-received JSON
still parses to a usable command, so a host that ran it would create the file ``ran-anyway``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from vendor_helpers import (
    CUT_OFF_CASES,
    assistants,
    blocks,
    of_type,
    sent_tool_result,
    stream_reply,
    text_of,
    tool_results,
)


@pytest.mark.parametrize(("api", "cut", "answer", "raw"), CUT_OFF_CASES)
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
        assert sent_tool_result(api, sse_server.requests[1].body) == (call["id"].partition("|")[0], expected)
        assert text_of(second) == "All done."
        assert of_type(events, "auto_retry_start") == [] and of_type(events, "compaction_start") == []
        # The failed call is in the session like any other tool result.
        messages = await host.client.get_messages()
        assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "assistant"]
        assert json.dumps(messages[2]["content"]).count("not executed") == 1
