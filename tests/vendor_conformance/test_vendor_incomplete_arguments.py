"""Tool-call arguments that are not complete JSON when the reply ends are never run, whatever the
stop reason says.

Each fixture streams a ``bash`` call whose arguments stop mid-string, ``{"command": "rm -rf
keep_me_dir`` (the model meant ``keep_me_dir_build"}``), and then ends normally (``tool_use``,
``tool_calls``, ``completed``), as a proxy or server that cuts a stream short may. The lenient
streaming parser repairs that into ``{"command": "rm -rf keep_me_dir"}``, which validates and would
delete the wrong directory. Gemini is not here: its ``functionCall.args`` arrive as a whole JSON
object inside each chunk, so they cannot stop mid-string.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from vendor_helpers import NO_RETRY, assistants, blocks, of_type, sent_tool_result, stream_reply, text_of, tool_results

from atomic_host import testing_sse as sse

CASES = [
    ("anthropic-messages", "anthropic/tool_use_args_cut.sse", "anthropic/answer.sse", "tool_use"),
    ("openai-completions", "openai_chat/tool_calls_args_cut.sse", "openai_chat/answer.sse", "tool_calls"),
    ("openai-responses", "openai_responses/function_call_args_cut.sse", "openai_responses/answer.sse", "completed"),
]
EXPECTED = (
    'Tool call "bash" was not executed: its arguments were not a complete JSON object when the response '
    "ended, so they may be truncated. Re-issue the tool call with complete arguments."
)


@pytest.mark.parametrize(("api", "cut", "answer", "raw"), CASES)
async def test_arguments_cut_mid_string_with_a_normal_stop_are_not_run(
    vendor_host: Any, sse_server: Any, api: str, cut: str, answer: str, raw: str
) -> None:
    sse_server.enqueue(stream_reply(cut))
    sse_server.enqueue(stream_reply(answer))
    async with vendor_host(api, settings=NO_RETRY) as host:
        keep = host.cwd / "keep_me_dir"
        (keep / "src").mkdir(parents=True)
        (keep / "src" / "main.c").write_text("int main(void) { return 0; }\n")
        (host.cwd / "keep_me_dir_build").mkdir()
        events = await host.client.prompt_and_wait("clean the build output", timeout=60)
        assert (keep / "src" / "main.c").read_text() == "int main(void) { return 0; }\n", "the cut command ran"
        first, second = assistants(events)
        assert first["stopReason"] == "toolUse" and first["rawStopReason"] == raw
        (call,) = blocks(first, "toolCall")
        # What streamed is shown as the lenient parser read it (display only)...
        assert call["arguments"] == {"command": "rm -rf keep_me_dir"}
        # ...but the call is answered with an error, without running (no bash output, no hook).
        (start,) = of_type(events, "tool_execution_start")
        (end,) = of_type(events, "tool_execution_end")
        assert start["toolCallId"] == end["toolCallId"] == call["id"]
        assert end["isError"] is True and end["result"]["content"] == [{"type": "text", "text": EXPECTED}]
        (result,) = tool_results(events)
        assert result["isError"] is True and result["content"][0]["text"] == EXPECTED
        assert of_type(events, "tool_execution_update") == []
        # The model is told in the next request and answers; the run ended normally.
        sent_id, sent_text = sent_tool_result(api, sse_server.requests[1].body)
        assert sent_text == EXPECTED and sent_id == call["id"].partition("|")[0]
        assert text_of(second) == "All done."


def _anthropic_call(arguments: str) -> list[str]:
    return sse.anthropic_frames([
        {"type": "message_start", "message": {"id": "msg_num", "usage": {"input_tokens": 50, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "toolu_num", "name": "bash", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": arguments}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 20}},
        {"type": "message_stop"},
    ])  # fmt: skip


def _chat_call(arguments: str) -> list[str]:
    return sse.openai_chat_frames([
        {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
            {"index": 0, "id": "call_num", "type": "function", "function": {"name": "bash", "arguments": arguments}}]},
            "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ])  # fmt: skip


@pytest.mark.parametrize(("api", "frames", "answer"), [
    ("anthropic-messages", _anthropic_call, "anthropic/answer.sse"),
    ("openai-completions", _chat_call, "openai_chat/answer.sse"),
])  # fmt: skip
async def test_numbers_json_cannot_carry_do_not_break_the_session(
    vendor_host: Any, sse_server: Any, api: str, frames: Any, answer: str
) -> None:
    """``1e400`` is valid JSON but no float: read as infinity it ran, and then every later request
    of the session failed to encode (``Out of range float values are not JSON compliant``). It is
    kept as its text. ``NaN`` is not JSON: that call is refused like any incomplete one."""
    sse_server.enqueue(frames('{"command": "echo ran >> out.txt", "budget": 1e400}'))
    sse_server.enqueue(frames('{"command": "touch nan-ran", "budget": NaN}'))
    sse_server.enqueue(stream_reply(answer))
    async with vendor_host(api, settings=NO_RETRY) as host:
        events = await host.client.prompt_and_wait("go", timeout=60)
        replies = assistants(events)
        assert [m["stopReason"] for m in replies] == ["toolUse", "toolUse", "stop"], replies[-1].get("errorMessage")
        assert blocks(replies[0], "toolCall")[0]["arguments"] == {"command": "echo ran >> out.txt", "budget": "1e400"}
        assert (host.cwd / "out.txt").read_text() == "ran\n"
        assert not (host.cwd / "nan-ran").exists()
        assert [r["isError"] for r in tool_results(events)] == [False, True]
        assert len(sse_server.requests) == 3 and "1e400" in json.dumps(sse_server.requests[2].body)
