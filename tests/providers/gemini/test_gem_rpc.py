"""The Gemini provider through the real ``atomic --mode rpc`` host and the real local SSE server.

The built-in ``google`` models (the catalog's prices and limits) are rerouted to the server by a
models.json that sets only ``baseUrl``; the key comes from ``GEMINI_API_KEY`` (or ``GOOGLE_API_KEY``).
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from gem_helpers import (
    FLASH,
    KEY,
    SIG_CALL,
    SIG_TEXT,
    assistants,
    blocks,
    error_reply,
    of_type,
    stream_reply,
    text_of,
    tool_results,
    updates,
)

pytestmark = pytest.mark.slow  # a real SSE server per provider case


async def test_text_request_shape_utf8_split_and_usage_cost(gemini_host: Any, gem_server: Any) -> None:
    gem_server.enqueue(stream_reply("text_cached.sse"))
    async with gemini_host() as host:
        events = await host.client.prompt_and_wait("say it")
        (reply,) = assistants(events)
        assert text_of(reply) == "Bonjour — le café est prêt ☕, naïve façade 🦅."
        assert [d["delta"] for d in updates(events, "text_delta")] == [
            "Bonjour — le café",
            " est prêt ☕, ",
            "naïve façade 🦅.",
        ]
        assert reply["stopReason"] == "stop" and reply["rawStopReason"] == "STOP"
        assert (reply["provider"], reply["model"], reply["api"]) == ("google", FLASH, "google-generative-ai")
        assert reply["responseId"] == "fx-text" and "responseModel" not in reply
        # usageMetadata of the last frame: 1200 prompt tokens, 1000 of them from the cache; output =
        # candidates + thoughts.
        usage = reply["usage"]
        assert (usage["input"], usage["cacheRead"], usage["output"], usage["reasoning"]) == (200, 1000, 80, 30)
        assert usage["totalTokens"] == 1280
        # gemini-2.5-flash: $0.30 in, $2.50 out, $0.03 cache read per million.
        cost = usage["cost"]
        assert cost["input"] == pytest.approx(200 * 0.3 / 1e6)
        assert cost["output"] == pytest.approx(80 * 2.5 / 1e6)
        assert cost["cacheRead"] == pytest.approx(1000 * 0.03 / 1e6)
        assert cost["total"] == pytest.approx(0.00006 + 0.0002 + 0.00003)
        stats = await host.client.get_session_stats()
        assert stats["cost"] == pytest.approx(cost["total"])

        (request,) = gem_server.requests
        assert request.path == f"/v1beta/models/{FLASH}:streamGenerateContent?alt=sse"
        assert request.headers["x-goog-api-key"] == KEY and "authorization" not in request.headers
        body = request.body
        assert body["contents"] == [{"role": "user", "parts": [{"text": "say it"}]}]
        assert body["systemInstruction"]["parts"][0]["text"]
        config = body["generationConfig"]
        # Session default thinking level medium → gemini-2.5-flash's medium budget, thoughts included.
        assert config["thinkingConfig"] == {"includeThoughts": True, "thinkingBudget": 8192}
        assert config["maxOutputTokens"] == 65536
        declarations = body["tools"][0]["functionDeclarations"]
        names = {d["name"] for d in declarations}
        assert "bash" in names
        text = json.dumps(declarations)
        for refused in ("$schema", "additionalProperties", "$ref", "$defs", "const", "oneOf", "exclusiveM"):
            assert refused not in text, refused


async def test_thinking_and_signature_are_sent_back_in_the_next_request(gemini_host: Any, gem_server: Any) -> None:
    gem_server.enqueue(stream_reply("thinking_signature.sse"))
    gem_server.enqueue(stream_reply("answer.sse"))
    async with gemini_host() as host:
        events = await host.client.prompt_and_wait("is seven prime?")
        (reply,) = assistants(events)
        assert [b["type"] for b in reply["content"]] == ["thinking", "text"]
        (thinking,) = blocks(reply, "thinking")
        assert thinking["thinking"] == "**Weighing the options**\n\nThe user wants a number; seven is prime."
        (text,) = blocks(reply, "text")
        assert text["text"] == "Seven is prime." and text["textSignature"] == SIG_TEXT
        assert [e["type"] for e in updates(events, "thinking_end")] == ["thinking_end"]
        assert reply["usage"]["output"] == 92 and reply["usage"]["reasoning"] == 88

        await host.client.prompt_and_wait("and nine?")
        contents = gem_server.requests[1].body["contents"]
        assert [c["role"] for c in contents] == ["user", "model", "user"]
        assert contents[1]["parts"] == [
            {"thought": True, "text": "**Weighing the options**\n\nThe user wants a number; seven is prime."},
            {"text": "Seven is prime.", "thoughtSignature": SIG_TEXT},
        ]
        assert contents[2] == {"role": "user", "parts": [{"text": "and nine?"}]}


async def test_function_calls_are_run_and_answered_with_function_responses(gemini_host: Any, gem_server: Any) -> None:
    gem_server.enqueue(stream_reply("function_calls.sse"))
    gem_server.enqueue(stream_reply("answer.sse"))
    async with gemini_host() as host:
        events = await host.client.prompt_and_wait("run both")
        first, second = assistants(events)
        calls = blocks(first, "toolCall")
        assert [c["arguments"] for c in calls] == [
            {"command": "printf gemini-one"},
            {"command": "printf gemini-two > proof.txt"},
        ]
        assert calls[0]["thoughtSignature"] == SIG_CALL and "thoughtSignature" not in calls[1]
        assert len({c["id"] for c in calls}) == 2  # Gemini 2.5 sends no ids: the adapter makes unique ones
        assert first["stopReason"] == "toolUse" and first["rawStopReason"] == "STOP"
        assert [e["assistantMessageEvent"]["toolCall"]["name"] for e in of_type(events, "message_update")
                if e["assistantMessageEvent"]["type"] == "toolcall_end"] == ["bash", "bash"]  # fmt: skip
        assert (host.cwd / "proof.txt").read_text() == "gemini-two"
        results = tool_results(events)
        assert [r["toolCallId"] for r in results] == [c["id"] for c in calls]
        assert all(r["isError"] is False for r in results)
        assert text_of(second) == "All done."

        contents = gem_server.requests[1].body["contents"]
        assert [c["role"] for c in contents] == ["user", "model", "user"]
        model_turn, answers = contents[1]["parts"], contents[2]["parts"]
        assert model_turn[0] == {"thought": True, "text": "I will run both commands."}
        # The calls go back as they came: no made-up ids, the signature on the first call.
        assert model_turn[1] == {
            "functionCall": {"name": "bash", "args": {"command": "printf gemini-one"}},
            "thoughtSignature": SIG_CALL,
        }
        assert model_turn[2] == {"functionCall": {"name": "bash", "args": {"command": "printf gemini-two > proof.txt"}}}
        # Both results in one user turn, in call order, as functionResponse parts.
        assert [p["functionResponse"]["name"] for p in answers] == ["bash", "bash"]
        assert answers[0]["functionResponse"]["response"]["output"].strip() == "gemini-one"
        assert "id" not in answers[0]["functionResponse"]


async def test_gemini_3_call_ids_and_signatures_round_trip(gemini_host: Any, gem_server: Any) -> None:
    gem_server.enqueue(stream_reply("gemini3_call_id.sse"))
    gem_server.enqueue(stream_reply("answer.sse"))
    async with gemini_host(model="gemini-3-flash-preview") as host:
        events = await host.client.prompt_and_wait("three")
        first, _ = assistants(events)
        (call,) = blocks(first, "toolCall")
        assert call["id"] == "fc-7f3a" and call["thoughtSignature"] == "EjQKMgG3Gemini3SignatureDDDD=="
        assert "responseModel" not in first  # modelVersion is the model id itself
        first_body = gem_server.requests[0].body
        # Gemini 3 takes a thinking level; medium maps to MEDIUM on 3 Flash.
        assert first_body["generationConfig"]["thinkingConfig"] == {"includeThoughts": True, "thinkingLevel": "MEDIUM"}
        contents = gem_server.requests[1].body["contents"]
        assert contents[1]["parts"][0]["functionCall"]["id"] == "fc-7f3a"
        assert contents[2]["parts"][0]["functionResponse"]["id"] == "fc-7f3a"
        assert contents[2]["parts"][0]["functionResponse"]["response"]["output"].strip() == "three"


async def test_safety_stop_is_an_error_that_says_so_and_is_not_retried(gemini_host: Any, gem_server: Any) -> None:
    gem_server.enqueue(stream_reply("safety_stop.sse"))
    async with gemini_host() as host:
        events = await host.client.prompt_and_wait("how to")
        (reply,) = assistants(events)
        assert reply["stopReason"] == "error" and reply["rawStopReason"] == "SAFETY"
        assert reply["errorMessage"] == (
            "Gemini stopped the response for safety reasons (finishReason SAFETY: HARM_CATEGORY_DANGEROUS_CONTENT)"
        )
        assert text_of(reply) == "Step one: gather"  # what arrived before the stop stays visible
        assert of_type(events, "auto_retry_start") == [] and len(gem_server.requests) == 1


async def test_blocked_prompt_is_an_error_that_says_so_and_is_not_retried(gemini_host: Any, gem_server: Any) -> None:
    gem_server.enqueue(stream_reply("prompt_blocked.sse"))
    async with gemini_host() as host:
        events = await host.client.prompt_and_wait("something nasty")
        (reply,) = assistants(events)
        assert reply["stopReason"] == "error" and reply["rawStopReason"] == "blockReason.SAFETY"
        assert reply["errorMessage"] == (
            "Gemini blocked the prompt for safety reasons (blockReason SAFETY: HARM_CATEGORY_HARASSMENT)"
        )
        assert reply["content"] == [] and reply["usage"]["input"] == 9
        assert of_type(events, "auto_retry_start") == [] and len(gem_server.requests) == 1


async def test_429_with_retry_info_is_retried_after_the_delay_it_asks(gemini_host: Any, gem_server: Any) -> None:
    gem_server.enqueue(error_reply(429, "http_429_resource_exhausted.json"))
    gem_server.enqueue(stream_reply("answer.sse"))
    async with gemini_host() as host:  # baseDelayMs 50: without RetryInfo the wait would be 50 ms
        stamps: list[tuple[float, dict[str, Any]]] = []
        host.client.on_event(lambda e: stamps.append((time.monotonic(), e)))
        events = await host.client.prompt_and_wait("hi")
        failed, good = assistants(events)
        assert failed["errorMessage"] == "429 RESOURCE_EXHAUSTED: Resource has been exhausted (e.g. check quota)."
        assert failed["retryAfterMs"] == 1000
        (start,) = of_type(events, "auto_retry_start")
        assert start["delayMs"] == 1000 and start["errorMessage"] == failed["errorMessage"]
        began = next(t for t, e in stamps if e["type"] == "auto_retry_start")
        resumed = next(t for t, e in stamps if t >= began and e["type"] == "message_start"
                       and e["message"]["role"] == "assistant")  # fmt: skip
        assert resumed - began >= 0.9
        assert text_of(good) == "All done." and of_type(events, "auto_retry_end")[0]["success"] is True
        assert len(gem_server.requests) == 2


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (
            ("http", 503, "http_503_unavailable.json"),
            "503 UNAVAILABLE: The model is overloaded. Please try again later.",
        ),
        (
            ("sse", 200, "midstream_internal.sse"),
            "500 INTERNAL: An internal error has occurred. Please retry or report in "
            "https://developers.generativeai.google/guide/troubleshooting",
        ),
    ],
)
async def test_unavailable_and_internal_errors_are_retried(
    gemini_host: Any, gem_server: Any, reply: tuple[str, int, str], message: str
) -> None:
    kind, status, name = reply
    gem_server.enqueue(error_reply(status, name) if kind == "http" else stream_reply(name))
    gem_server.enqueue(stream_reply("answer.sse"))
    async with gemini_host() as host:
        events = await host.client.prompt_and_wait("hi")
        failed, good = assistants(events)
        assert failed["stopReason"] == "error" and failed["errorMessage"] == message
        assert len(of_type(events, "auto_retry_start")) == 1 and text_of(good) == "All done."


async def test_400_is_not_retried(gemini_host: Any, gem_server: Any) -> None:
    gem_server.enqueue(error_reply(400, "http_400_api_key_invalid.json"))
    async with gemini_host() as host:
        events = await host.client.prompt_and_wait("hi")
        (failed,) = assistants(events)
        assert failed["errorMessage"] == (
            "400 INVALID_ARGUMENT: API key not valid. Please pass a valid API key. (API_KEY_INVALID)"
        )
        assert of_type(events, "auto_retry_start") == [] and len(gem_server.requests) == 1


async def test_call_cut_off_by_max_tokens_is_not_run_and_the_model_is_told(gemini_host: Any, gem_server: Any) -> None:
    gem_server.enqueue(stream_reply("max_tokens_in_call.sse"))
    gem_server.enqueue(stream_reply("answer.sse"))
    async with gemini_host() as host:
        events = await host.client.prompt_and_wait("write the file")
        first, second = assistants(events)
        assert first["stopReason"] == "length" and first["rawStopReason"] == "MAX_TOKENS"
        (call,) = blocks(first, "toolCall")
        assert call["arguments"] == {"command": "touch ran-anyway"}
        assert not (host.cwd / "ran-anyway").exists(), "the truncated command ran"
        (end,) = of_type(events, "tool_execution_end")
        assert end["isError"] is True and end["toolCallId"] == call["id"]
        expected = (
            'Tool call "bash" was not executed: the response hit the output token limit, so its arguments '
            "may be truncated. Re-issue the tool call with complete arguments."
        )
        assert end["result"]["content"] == [{"type": "text", "text": expected}]
        # The model is told, as an error functionResponse in the follow-up request.
        answer = gem_server.requests[1].body["contents"][-1]["parts"][0]["functionResponse"]
        assert answer == {"name": "bash", "response": {"error": expected}}
        assert text_of(second) == "All done."
        assert of_type(events, "auto_retry_start") == [] and of_type(events, "compaction_start") == []


async def test_google_api_key_env_var_and_catalog_models_are_listed(gemini_host: Any, gem_server: Any) -> None:
    gem_server.enqueue(stream_reply("answer.sse"))
    async with gemini_host(env={"GOOGLE_API_KEY": "google-key-77"}) as host:
        models = (await host.client.get_available_models()).models
        ours = {m["id"]: m for m in models if m["provider"] == "google"}
        assert {"gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-3-pro-preview"} <= set(ours)
        assert all(m["api"] == "google-generative-ai" for m in ours.values())
        assert ours["gemini-2.5-pro"]["contextWindow"] == 1048576
        await host.client.prompt_and_wait("hi")
        assert gem_server.requests[0].headers["x-goog-api-key"] == "google-key-77"
        # gemini-2.5-pro cannot think "off"; 3 Pro has only low and high.
        await host.client.set_model("google", "gemini-2.5-pro")
        assert ((await host.client.get_available_thinking_levels()).levels)[0] == "minimal"
        await host.client.set_model("google", "gemini-3-pro-preview")
        assert (await host.client.get_available_thinking_levels()).levels == ["low", "high"]
