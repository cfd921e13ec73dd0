"""anthropic-messages as the real service streams it, through a real host and a local SSE server.

Replies come in 5-byte pieces, so multi-byte characters and frames are split across reads.
"""

from __future__ import annotations

from typing import Any

import pytest
from vendor_helpers import assistants, blocks, error_reply, of_type, stream_reply, text_of

API = "anthropic-messages"


async def test_text_padding_ping_utf8_split_and_input_tokens_in_message_delta(
    vendor_host: Any, sse_server: Any
) -> None:
    sse_server.enqueue(stream_reply("anthropic/text_utf8.sse"))
    async with vendor_host(API) as host:
        events = await host.client.prompt_and_wait("divide")
        (reply,) = assistants(events)
        assert text_of(reply) == "12 ÷ 4 = 3, café 🦅"
        assert reply["stopReason"] == "stop" and reply["rawStopReason"] == "end_turn"
        # message_delta carried input_tokens (34) after message_start said 21: the later value wins.
        assert reply["usage"]["input"] == 34 and reply["usage"]["output"] == 12
        assert reply["usage"]["totalTokens"] == 46
        assert reply["responseId"] == "msg_fx_text" and reply["responseModel"] == "claude-fixture-4"
        deltas = [e["assistantMessageEvent"]["delta"] for e in of_type(events, "message_update")
                  if e["assistantMessageEvent"]["type"] == "text_delta"]
        assert deltas == ["12 ÷ 4 = 3", ", café 🦅"]


async def test_thinking_signature_and_tool_call_are_replayed_in_the_next_request(
    vendor_host: Any, sse_server: Any
) -> None:
    sse_server.enqueue(stream_reply("anthropic/thinking_tool.sse"))
    sse_server.enqueue(stream_reply("anthropic/answer.sse"))
    async with vendor_host(API) as host:
        events = await host.client.prompt_and_wait("list")
        first, second = assistants(events)
        (thinking,) = blocks(first, "thinking")
        assert thinking["thinking"] == "I should list the files first."
        assert thinking["thinkingSignature"] == "RXFvRGZpeHR1cmUtc2lnbmF0dXJlLW9uZQ=="
        (call,) = blocks(first, "toolCall")
        assert call["name"] == "bash" and call["arguments"] == {"command": "echo listed"}
        assert first["stopReason"] == "toolUse" and first["usage"]["output"] == 61
        end = of_type(events, "tool_execution_end")[0]
        assert end["isError"] is False and end["result"]["content"][0]["text"].strip() == "listed"
        assert text_of(second) == "All done."
        # The follow-up request sends the signed thinking block back unchanged, then the tool_use.
        assistant_turn = sse_server.requests[1].body["messages"][1]
        assert assistant_turn["role"] == "assistant"
        assert assistant_turn["content"][0] == {
            "type": "thinking",
            "thinking": "I should list the files first.",
            "signature": "RXFvRGZpeHR1cmUtc2lnbmF0dXJlLW9uZQ==",
        }
        assert assistant_turn["content"][1]["type"] == "tool_use"
        assert assistant_turn["content"][1]["input"] == {"command": "echo listed"}


async def test_adaptive_thinking_text_block_before_thinking(vendor_host: Any, sse_server: Any) -> None:
    sse_server.enqueue(stream_reply("anthropic/adaptive_text_first.sse"))
    sse_server.enqueue(stream_reply("anthropic/answer.sse"))
    async with vendor_host(API) as host:
        events = await host.client.prompt_and_wait("answer")
        (reply,) = assistants(events)
        assert [b["type"] for b in reply["content"]] == ["text", "thinking", "text"]
        assert reply["content"][1]["thinking"] == "Short answer."
        assert reply["content"][1]["thinkingSignature"] == "QWRhcHRpdmUtZml4dHVyZQ=="
        assert reply["content"][2]["text"] == "Forty-two." and reply["stopReason"] == "stop"
        await host.client.prompt_and_wait("again")
        # Replayed without the whitespace-only text block (the API rejects those), signature intact.
        assistant_turn = sse_server.requests[1].body["messages"][1]
        assert [b["type"] for b in assistant_turn["content"]] == ["thinking", "text"]
        assert assistant_turn["content"][0]["signature"] == "QWRhcHRpdmUtZml4dHVyZQ=="


async def test_redacted_thinking_in_data_only_frames(vendor_host: Any, sse_server: Any) -> None:
    sse_server.enqueue(stream_reply("anthropic/redacted_thinking_data_only.sse"))
    sse_server.enqueue(stream_reply("anthropic/answer.sse"))
    async with vendor_host(API) as host:
        events = await host.client.prompt_and_wait("hello")
        (reply,) = assistants(events)
        thinking = blocks(reply, "thinking")[0]
        assert thinking["redacted"] is True and thinking["thinkingSignature"] == "opaque-fixture-blob"
        assert text_of(reply) == "Hi there." and reply["usage"]["output"] == 88
        await host.client.prompt_and_wait("more")
        assistant_turn = sse_server.requests[1].body["messages"][1]
        assert assistant_turn["content"][0] == {"type": "redacted_thinking", "data": "opaque-fixture-blob"}


@pytest.mark.parametrize("fixture", ["first_chunk_overloaded.sse", "first_chunk_overloaded_data_only.sse"])
async def test_first_chunk_overloaded_error_is_retried(vendor_host: Any, sse_server: Any, fixture: str) -> None:
    sse_server.enqueue(stream_reply(f"anthropic/{fixture}"))
    sse_server.enqueue(stream_reply("anthropic/answer.sse"))
    async with vendor_host(API) as host:
        events = await host.client.prompt_and_wait("hi")
        failed, good = assistants(events)
        assert failed["stopReason"] == "error"
        assert "overloaded_error" in failed["errorMessage"] and "Overloaded" in failed["errorMessage"]
        (start,) = of_type(events, "auto_retry_start")
        assert start["errorMessage"] == failed["errorMessage"]
        assert of_type(events, "auto_retry_end")[0]["success"] is True and text_of(good) == "All done."


async def test_midstream_overloaded_error_keeps_partial_text_and_is_retried(vendor_host: Any, sse_server: Any) -> None:
    sse_server.enqueue(stream_reply("anthropic/midstream_overloaded.sse"))
    sse_server.enqueue(stream_reply("anthropic/answer.sse"))
    async with vendor_host(API) as host:
        events = await host.client.prompt_and_wait("hi")
        failed, good = assistants(events)
        assert text_of(failed) == "Half an ans" and failed["stopReason"] == "error"
        assert failed["errorMessage"] == (
            '{"type":"error","error":{"details":null,"type":"overloaded_error","message":"Overloaded"}}'
        )
        assert len(of_type(events, "auto_retry_start")) == 1 and text_of(good) == "All done."


@pytest.mark.parametrize(
    ("status", "fixture"), [(529, "http_529_overloaded.json"), (500, "http_500_api_error.json"),
                            (429, "http_429_rate_limit.json")]
)
async def test_transient_http_errors_are_retried(vendor_host: Any, sse_server: Any, status: int, fixture: str) -> None:
    sse_server.enqueue(error_reply(status, f"anthropic/{fixture}"))
    sse_server.enqueue(stream_reply("anthropic/answer.sse"))
    async with vendor_host(API) as host:
        events = await host.client.prompt_and_wait("hi")
        failed, good = assistants(events)
        assert failed["errorMessage"].startswith(f"{status} {{\"type\":\"error\"")
        assert len(of_type(events, "auto_retry_start")) == 1 and text_of(good) == "All done."


async def test_401_is_not_retried(vendor_host: Any, sse_server: Any) -> None:
    sse_server.enqueue(error_reply(401, "anthropic/http_401_authentication.json"))
    async with vendor_host(API) as host:
        events = await host.client.prompt_and_wait("hi")
        (failed,) = assistants(events)
        assert failed["errorMessage"] == (
            '401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},'
            '"request_id":"req_fx_401"}'
        )
        assert of_type(events, "auto_retry_start") == [] and of_type(events, "compaction_start") == []


async def test_400_prompt_too_long_compacts_instead_of_retrying(vendor_host: Any, sse_server: Any) -> None:
    sse_server.enqueue(error_reply(400, "anthropic/http_400_prompt_too_long.json"))
    sse_server.enqueue(stream_reply("anthropic/answer.sse"))
    async with vendor_host(API) as host:
        events = await host.client.prompt_and_wait("hi")
        assert of_type(events, "auto_retry_start") == []
        assert [e["reason"] for e in of_type(events, "compaction_start")] == ["overflow"]
        assert of_type(events, "compaction_end")[0]["willRetry"] is True
        assert text_of(assistants(events)[-1]) == "All done."


async def test_refusal_stop_is_an_error_that_says_so_and_is_not_retried(vendor_host: Any, sse_server: Any) -> None:
    sse_server.enqueue(stream_reply("anthropic/refusal.sse"))
    async with vendor_host(API) as host:
        events = await host.client.prompt_and_wait("do something bad")
        (reply,) = assistants(events)
        assert reply["stopReason"] == "error" and reply["rawStopReason"] == "refusal"
        assert reply["errorMessage"] == (
            "The model refused to complete the request: This request was blocked under the usage policy."
        )
        assert of_type(events, "auto_retry_start") == [] and len(sse_server.requests) == 1

