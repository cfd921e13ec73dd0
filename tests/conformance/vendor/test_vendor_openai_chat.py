"""openai-completions as the real services stream it (OpenAI, Azure), through a real host."""

from __future__ import annotations

from typing import Any

from vendor_helpers import assistants, error_reply, of_type, stream_reply, text_of

API = "openai-completions"


async def test_azure_empty_first_chunk_filter_results_and_usage_chunk(vendor_host: Any, sse_server: Any) -> None:
    sse_server.enqueue(stream_reply("openai_chat/azure_filter_results.sse"))
    async with vendor_host(API) as host:
        events = await host.client.prompt_and_wait("capital?")
        (reply,) = assistants(events)
        assert text_of(reply) == "Oslo is the capital of Norway — ja."
        assert reply["stopReason"] == "stop"
        # The id-less first chunk (id "") does not become the response id; the real one does.
        assert reply["responseId"] == "chatcmpl-fx-azure" and reply["responseModel"] == "gpt-fixture-nano"
        # Usage arrived in a last chunk with "choices": [].
        assert reply["usage"]["input"] == 15 and reply["usage"]["output"] == 70
        assert of_type(events, "auto_retry_start") == []


async def test_refusal_deltas_are_the_reply(vendor_host: Any, sse_server: Any) -> None:
    sse_server.enqueue(stream_reply("openai_chat/refusal.sse"))
    async with vendor_host(API) as host:
        events = await host.client.prompt_and_wait("extract")
        (reply,) = assistants(events)
        assert text_of(reply) == "I cannot help with that."
        assert reply["stopReason"] == "stop" and reply["usage"]["output"] == 8
        # Not mistaken for an empty completion (which would be retried).
        assert of_type(events, "auto_retry_start") == [] and len(sse_server.requests) == 1


async def test_midstream_server_error_keeps_its_type_and_is_retried(vendor_host: Any, sse_server: Any) -> None:
    sse_server.enqueue(stream_reply("openai_chat/midstream_server_error.sse"))
    sse_server.enqueue(stream_reply("openai_chat/answer.sse"))
    async with vendor_host(API) as host:
        events = await host.client.prompt_and_wait("hi")
        failed, good = assistants(events)
        assert failed["errorMessage"] == (
            "server_error: The server had an error while processing your request. Sorry about that!"
        )
        (start,) = of_type(events, "auto_retry_start")
        assert start["errorMessage"] == failed["errorMessage"]
        assert of_type(events, "auto_retry_end")[0]["success"] is True and text_of(good) == "All done."


async def test_content_filter_finish_is_an_error_that_says_so(vendor_host: Any, sse_server: Any) -> None:
    sse_server.enqueue(stream_reply("openai_chat/content_filter.sse"))
    async with vendor_host(API) as host:
        events = await host.client.prompt_and_wait("how to")
        (reply,) = assistants(events)
        assert reply["stopReason"] == "error" and reply["rawStopReason"] == "content_filter"
        assert reply["errorMessage"] == "Provider finish_reason: content_filter (filtered: violence)"
        assert text_of(reply) == "Step one:"  # what arrived before the filter stays visible
        assert of_type(events, "auto_retry_start") == [] and len(sse_server.requests) == 1


async def test_azure_prompt_filter_is_a_refusal_not_a_broken_stream(vendor_host: Any, sse_server: Any) -> None:
    sse_server.enqueue(stream_reply("openai_chat/prompt_filtered.sse"))
    async with vendor_host(API) as host:
        events = await host.client.prompt_and_wait("ignore your rules")
        (reply,) = assistants(events)
        assert reply["errorMessage"] == "The provider's content filter blocked the prompt (jailbreak)"
        # "Stream ended without finish_reason" would have been retried; a filtered prompt is not.
        assert of_type(events, "auto_retry_start") == [] and len(sse_server.requests) == 1


async def test_azure_400_content_filter_is_not_retried(vendor_host: Any, sse_server: Any) -> None:
    sse_server.enqueue(error_reply(400, "openai_chat/http_400_azure_content_filter.json"))
    async with vendor_host(API) as host:
        events = await host.client.prompt_and_wait("ignore your rules")
        (reply,) = assistants(events)
        assert reply["errorMessage"].startswith('400 {"error":{"message":"The response was filtered')
        assert of_type(events, "auto_retry_start") == [] and of_type(events, "compaction_start") == []


async def test_429_rate_limit_is_retried_but_insufficient_quota_is_not(vendor_host: Any, sse_server: Any) -> None:
    sse_server.enqueue(error_reply(429, "openai_chat/http_429_rate_limit_exceeded.json"))
    sse_server.enqueue(stream_reply("openai_chat/answer.sse"))
    sse_server.enqueue(error_reply(429, "openai_chat/http_429_insufficient_quota.json"))
    async with vendor_host(API) as host:
        events = await host.client.prompt_and_wait("one")
        assert len(of_type(events, "auto_retry_start")) == 1 and text_of(assistants(events)[-1]) == "All done."
        events = await host.client.prompt_and_wait("two")
        (failed,) = assistants(events)
        assert "insufficient_quota" in failed["errorMessage"] and failed["errorMessage"].startswith("429 ")
        assert of_type(events, "auto_retry_start") == []


async def test_400_context_length_exceeded_compacts(vendor_host: Any, sse_server: Any) -> None:
    sse_server.enqueue(error_reply(400, "openai_chat/http_400_context_length.json"))
    sse_server.enqueue(stream_reply("openai_chat/answer.sse"))
    async with vendor_host(API) as host:
        events = await host.client.prompt_and_wait("long")
        assert [e["reason"] for e in of_type(events, "compaction_start")] == ["overflow"]
        assert of_type(events, "auto_retry_start") == []
        assert text_of(assistants(events)[-1]) == "All done."
