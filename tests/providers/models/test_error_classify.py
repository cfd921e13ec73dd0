"""Retry / overflow / class tables built from real provider error strings (providers.md §3-4)."""

from __future__ import annotations

from typing import Any

import pytest

from atomic_host.kit.llm.errors import (
    classify,
    is_canned_refusal,
    is_context_overflow,
    is_empty_completion,
    is_retryable_error,
)


def err(text: str, reason: str = "error", **usage: int) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [],
        "stopReason": reason,
        "errorMessage": text,
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, **usage},
    }


def answer(reason: str, content: list[dict[str, Any]], output: int = 0, **usage: int) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "stopReason": reason,
        "usage": {"input": 0, "output": output, "cacheRead": 0, "cacheWrite": 0, **usage},
    }


OVERLOADED = '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
RATE = '429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}'  # noqa: E501
ANTHROPIC_OVERFLOW = (
    '400 {"type":"error","error":{"type":"invalid_request_error",'
    '"message":"prompt is too long: 213462 tokens > 200000 maximum"}}'
)
OPENAI_OVERFLOW = "400 Your input exceeds the context window of this model. Please adjust your input and try again."
QUOTA = (
    '429 {"error":{"message":"You exceeded your current quota, please check your plan and billing '
    'details.","type":"insufficient_quota","code":"insufficient_quota"}}'
)
AUTH = '401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}'

RETRYABLE = [
    OVERLOADED,
    RATE,
    "Error code: 529 - {'type': 'error', 'error': {'type': 'overloaded_error'}}",
    "500 Internal server error",
    "502 <html><head><title>502 Bad Gateway</title></head></html>",
    "503 Service Unavailable",
    "504 Gateway Timeout",
    "524 A timeout occurred",
    "Provider returned error",
    "upstream connect error or disconnect/reset before headers. reset reason: connection termination",
    "fetch failed",
    "getaddrinfo ENOTFOUND api.anthropic.com",
    "getaddrinfo EAI_AGAIN api.openai.com",
    "connect ECONNREFUSED 127.0.0.1:443",
    "read ECONNRESET",
    "socket hang up",
    "The socket connection was closed unexpectedly",
    "other side closed",
    "Request timed out.",
    "The operation was aborted due to timeout",
    "terminated",
    "Connection error.",
    "Network error while streaming",
    "Stream deadline exceeded: no event for 300000 ms",
    "Anthropic stream ended before message_stop",
    "OpenAI Responses stream ended before a terminal response event",
    "Stream ended without finish_reason",
    "incorrect header check",
    "zlib: unexpected end of file",
    "Server requested 120s retry delay (max: 60s). 429 rate limited",
    "An error occurred while processing your request. You can retry your request",
    "Too Many Requests",
    "Error Code server_error: The server had an error processing your request.",
    "websocket closed",
    "http2 request did not get a response",
    "408 Request Timeout",
    "ResourceExhausted: too busy",
]

NOT_RETRYABLE = [
    ANTHROPIC_OVERFLOW,
    OPENAI_OVERFLOW,
    QUOTA,
    AUTH,
    "403 Forbidden",
    '400 {"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 5000 > 4096"}}',
    "404 model not found: claude-nope",
    "413 request_too_large",
    "422 Unprocessable Entity",
    "Your credit balance is too low to access the Anthropic API.",
    "GoUsageLimitError: monthly usage limit reached",
    "The model refused to complete the request",
    "Provider finish_reason: content_filter",
    "Provider stopped with: sensitive",
    "Request was cancelled",
    "Interrupted by user",
    "tests failed",
    "ENOENT: no such file or directory",
    "Unhandled stop reason: weird",
    "",
]


@pytest.mark.parametrize("text", RETRYABLE)
def test_retryable(text: str) -> None:
    assert is_retryable_error(err(text)) is True


@pytest.mark.parametrize("text", NOT_RETRYABLE)
def test_not_retryable(text: str) -> None:
    assert is_retryable_error(err(text)) is False


def test_aborted_never_retried() -> None:
    assert is_retryable_error(err("503 Service Unavailable", reason="aborted")) is False
    assert is_retryable_error(err(OVERLOADED, reason="length")) is False


def test_empty_completion_and_refusal() -> None:
    empty = answer("stop", [{"type": "text", "text": "  "}])
    assert is_empty_completion(empty) and is_retryable_error(empty)
    assert is_retryable_error(answer("toolUse", []))
    assert not is_retryable_error(answer("stop", [], output=3))
    assert not is_retryable_error(answer("stop", [{"type": "thinking", "thinking": "hmm"}]))
    assert not is_retryable_error(answer("toolUse", [{"type": "toolCall", "id": "1", "name": "x", "arguments": {}}]))
    refusal = answer("stop", [{"type": "text", "text": "I'm sorry, but I cannot assist with that request."}])
    assert is_canned_refusal(refusal) and is_retryable_error(refusal)
    curly = "I’m sorry, I can't help with that."
    assert is_retryable_error(answer("stop", [{"type": "text", "text": curly}]))
    assert not is_retryable_error(answer("stop", [{"type": "text", "text": "I'm sorry, I can't assist."}], output=9))
    long = "I'm sorry, but I cannot assist with that. " + "Here is a long explanation. " * 5
    assert not is_retryable_error(answer("stop", [{"type": "text", "text": long}]))
    assert not is_retryable_error(answer("stop", [{"type": "text", "text": "Hello!"}]))


OVERFLOW_TEXTS = [
    ANTHROPIC_OVERFLOW,
    '413 {"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}',
    "input is too long for requested model",
    OPENAI_OVERFLOW,
    "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
    "litellm.ContextWindowExceededError: exceeds the model's maximum context length of 8192 tokens",
    "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
    "This model's maximum prompt length is 131072 but the request contains 140000 tokens.",
    "Please reduce the length of the messages or completion.",
    "Input validation error: `inputs` tokens + `max_new_tokens` exceeds the maximum allowed input length of "
    "32768 tokens",
    "Input (40000 tokens) is longer than the model's context length (32768 tokens).",
    "prompt token count of 130000 exceeds the limit of 128000",
    "the request exceeds the available context size, try increasing it",
    "Trying to keep the first 5000 tokens when context the overflows. However, the model is loaded with "
    "context length of 4096. greater than the context length",
    "invalid params, context window exceeds limit (2013)",
    "Invalid request: exceeded model token limit: 262144 (requested: 300000)",
    "Prompt contains 140000 tokens and is too large for model with 131072 maximum context length",
    "prompt has 70000 tokens, but the configured context size is 65536 tokens",
    "model_context_window_exceeded",
    "prompt too long; exceeded max context length by 100 tokens",
    "Range of input length should be [1, 30720]",
    "context_length_exceeded",
    "too many tokens in request",
    "token limit exceeded",
    "400 status code (no body)",
    "413 (no body)",
]

NOT_OVERFLOW = [
    "Throttling error: Too many tokens, please wait before trying again.",
    "Service unavailable: too many tokens being processed",
    "429 rate limit: too many tokens per minute",
    "Too many requests: token limit exceeded for this minute",
    "400 Bad Request (no body)",
    OVERLOADED,
    "500 status code (no body)",
]


@pytest.mark.parametrize("text", OVERFLOW_TEXTS)
def test_overflow_texts(text: str) -> None:
    assert is_context_overflow(err(text), 200000) is True
    assert classify(err(text)) == "overflow"
    assert is_retryable_error(err(text)) is False


@pytest.mark.parametrize("text", NOT_OVERFLOW)
def test_not_overflow_texts(text: str) -> None:
    assert is_context_overflow(err(text), 200000) is False


def test_silent_and_length_overflow() -> None:
    assert is_context_overflow(answer("stop", [], output=5, input=190000, cacheRead=20000), 200000)
    assert not is_context_overflow(answer("stop", [], output=5, input=100000, cacheRead=100000), 200000)
    assert is_context_overflow(answer("length", [], input=198000), 200000)
    assert not is_context_overflow(answer("length", [], input=197000), 200000)
    assert not is_context_overflow(answer("length", [], output=10, input=199000), 200000)
    assert not is_context_overflow(answer("toolUse", [], input=300000), 200000)
    assert not is_context_overflow(answer("stop", [], input=300000), 0)
    # Overflow text only counts on error messages.
    assert not is_context_overflow(err("prompt is too long", reason="aborted"), 200000)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (RATE, "rate_limit"),
        (QUOTA, "rate_limit"),
        ("Too Many Requests", "rate_limit"),
        (OVERLOADED, "unavailable"),
        ("503 Service Unavailable", "unavailable"),
        ("Error code: 500 - internal error", "unavailable"),
        ("upstream connect error", "unavailable"),
        ("fetch failed", "network"),
        ("read ECONNRESET", "network"),
        ("Request timed out.", "network"),
        ("The operation was aborted due to timeout", "network"),
        ("Stream deadline exceeded", "network"),
        ("408 Request Timeout", "network"),
        (AUTH, "auth"),
        ("403 Forbidden", "auth"),
        ('403 {"type":"error","error":{"type":"permission_error"}}', "auth"),
        ("Incorrect API key provided: sk-xxx", "auth"),
        ("400 max_tokens: 5000 > 4096", "bad_request"),
        ("404 model not found", "bad_request"),
        ("422 Unprocessable Entity", "bad_request"),
        (ANTHROPIC_OVERFLOW, "overflow"),
        ("Request was cancelled", "aborted"),
        ("Provider stopped with: sensitive", "other"),
        ("", "other"),
    ],
)
def test_classify(text: str, kind: str) -> None:
    assert classify(err(text)) == kind


def test_classify_aborted_stop_reason() -> None:
    assert classify(err("Request was aborted", reason="aborted")) == "aborted"
    assert classify(err(OVERLOADED, reason="aborted")) == "aborted"
