"""openai-responses as the real service streams it, through a real host and a local SSE server."""

from __future__ import annotations

import json
from typing import Any

from vendor_helpers import assistants, blocks, of_type, stream_reply, text_of

API = "openai-responses"


async def test_error_event_fields_nested_under_error(vendor_host: Any, sse_server: Any) -> None:
    sse_server.enqueue(stream_reply("openai_responses/error_quota_then_failed.sse"))
    async with vendor_host(API) as host:
        events = await host.client.prompt_and_wait("hi")
        (failed,) = assistants(events)
        assert failed["errorMessage"] == (
            "Error Code insufficient_quota: You exceeded your current quota, "
            "please check your plan and billing details."
        )
        # Quota is not transient, and the response.failed that follows adds no second terminal event.
        assert of_type(events, "auto_retry_start") == [] and len(sse_server.requests) == 1


async def test_context_length_exceeded_error_event_compacts_and_the_next_prompt_works(
    vendor_host: Any, sse_server: Any
) -> None:
    sse_server.enqueue(stream_reply("openai_responses/error_context_length_exceeded.sse"))
    sse_server.enqueue(stream_reply("openai_responses/answer.sse"))
    sse_server.enqueue(stream_reply("openai_responses/answer.sse"))
    async with vendor_host(API) as host:
        events = await host.client.prompt_and_wait("a long question")
        failed, good = assistants(events)
        assert failed["errorMessage"] == (
            "Error Code context_length_exceeded: Your input exceeds the context window of this model. "
            "Please adjust your input and try again."
        )
        assert [e["reason"] for e in of_type(events, "compaction_start")] == ["overflow"]
        assert of_type(events, "compaction_end")[0]["willRetry"] is True
        assert of_type(events, "auto_retry_start") == [] and text_of(good) == "All done."
        events = await host.client.prompt_and_wait("and now?")
        assert text_of(assistants(events)[0]) == "All done." and of_type(events, "compaction_start") == []


async def test_response_failed_server_error_is_retried(vendor_host: Any, sse_server: Any) -> None:
    sse_server.enqueue(stream_reply("openai_responses/failed_server_error.sse"))
    sse_server.enqueue(stream_reply("openai_responses/answer.sse"))
    async with vendor_host(API) as host:
        events = await host.client.prompt_and_wait("hi")
        failed, good = assistants(events)
        assert failed["errorMessage"].startswith("server_error: An error occurred while processing your request.")
        assert failed["rawStopReason"] == "failed"
        assert len(of_type(events, "auto_retry_start")) == 1 and text_of(good) == "All done."


async def test_reasoning_summary_parts_are_separated_but_not_followed_by_a_blank_line(
    vendor_host: Any, sse_server: Any
) -> None:
    sse_server.enqueue(stream_reply("openai_responses/reasoning_two_parts.sse"))
    sse_server.enqueue(stream_reply("openai_responses/answer.sse"))
    async with vendor_host(API) as host:
        events = await host.client.prompt_and_wait("count")
        (reply,) = assistants(events)
        (thinking,) = blocks(reply, "thinking")
        assert thinking["thinking"] == "**Reading the task**\n\nCounting the letters."
        ends = [e["assistantMessageEvent"] for e in of_type(events, "message_update")
                if e["assistantMessageEvent"]["type"] == "thinking_end"]
        assert ends[0]["content"] == thinking["thinking"]
        assert json.loads(thinking["thinkingSignature"])["encrypted_content"] == "gAAAAFixtureEncrypted=="
        assert text_of(reply) == "Three “r”s in strawberry." and blocks(reply, "text")[0]["textSignature"] == "msg_fx_1"
        assert reply["usage"]["output"] == 105 and reply["stopReason"] == "stop"
        await host.client.prompt_and_wait("again")
        # The next request carries the reasoning item back with its encrypted content.
        replayed = [i for i in sse_server.requests[1].body["input"] if i.get("type") == "reasoning"]
        assert replayed[0]["encrypted_content"] == "gAAAAFixtureEncrypted=="
