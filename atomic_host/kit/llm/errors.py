"""Classifying failed assistant messages: retryable, context overflow, error class.

Classifiers match substrings of ``errorMessage``, so adapters build it as ``"<status> <body>"``
(providers.md §3). Patterns follow pi-ai's ``isRetryableAssistantError`` / ``isContextOverflow`` and
Atomic's additions (semantics.md §6.4).
"""

from __future__ import annotations

import re
from typing import Any

from atomic_host.kit.llm.context import REPLY_RESERVE_TOKENS

__all__ = ["classify", "is_context_overflow", "is_retryable_error"]

EMPTY_COMPLETION_MESSAGE = "Provider returned an empty completion"
LENGTH_FULL_RATIO = 0.95
"""A length stop whose prompt + output reach this share of the reply room counts as a full context."""

_OVERFLOW = re.compile(
    "|".join([
        r"prompt is too long",
        r"request_too_large",
        r"input is too long for requested model",
        r"exceeds the context window",
        r"exceeds (?:the )?(?:model'?s )?maximum context length",
        r"input token count.*exceeds the maximum",
        r"maximum prompt length is \d+",
        r"reduce the length of the messages",
        r"maximum context length is \d+ tokens",
        r"exceeds (?:the )?maximum allowed input length",
        r"input \(\d+ tokens\) is longer than the model'?s context length",
        r"exceeds the limit of \d+",
        r"exceeds the available context size",
        r"greater than the context length",
        r"context window exceeds limit",
        r"exceeded model token limit",
        r"too large for model with \d+ maximum context length",
        r"prompt has \d+ tokens, but the configured context size is \d+ tokens",
        r"model_context_window_exceeded",
        r"prompt too long",
        r"exceeded (?:max )?context length",
        r"range of input length should be",
        r"context[_ ]length[_ ]exceeded",
        r"too many tokens",
        r"token limit exceeded",
        r"^\s*4(?:00|13)\s*(?:status code)?\s*\(no body\)",
    ]),
    re.IGNORECASE | re.DOTALL,
)
_OVERFLOW_EXCLUDED = re.compile(
    r"^\s*(?:throttling error|service unavailable):|rate limit|too many requests", re.IGNORECASE
)
_QUOTA = re.compile(
    r"insufficient_quota|quota exceeded|exceeded your (?:current )?quota|out of budget|billing"
    r"|monthly usage limit|available balance|GoUsageLimitError|FreeUsageLimitError|credit balance",
    re.IGNORECASE,
)
_RATE_LIMIT = re.compile(r"rate.?limit|too many requests|\b429\b|ResourceExhausted|usage.?limit|quota", re.I)
_UNAVAILABLE = re.compile(
    r"overloaded|\b5(?:00|02|03|04|24|29)\b|service.?unavailable|server.?error|internal.?error"
    r"|provider.?returned.?error|\bterminated\b|upstream",
    re.IGNORECASE,
)
_NETWORK = re.compile(
    r"network.?error|connection.?(?:error|refused|lost|reset)|other side closed|fetch failed|getaddrinfo"
    r"|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNRESET|ECONNREFUSED|reset before headers|socket hang up"
    r"|socket connection was closed|timed? ?out|timeout|\b408\b|websocket.?(?:closed|error)|zlib"
    r"|incorrect header check|decompress|library error|stream deadline exceeded|ended without"
    r"|stream ended before|http2 request did not get a response|retry delay|you can retry your request"
    r"|try your request again|please retry your request",
    re.IGNORECASE,
)
_CANCELLED = re.compile(r"\babort|\bcancel|\binterrupted\b", re.IGNORECASE)
_NEVER_RETRY = re.compile(
    r"tests? failed|no such file|content.?filter|content.?policy|safety|policy violation"
    r"|\brefus(?:al|ed to)|sensitive"
    r"|invalid.?api.?key|authentication|unauthori[sz]ed|permission|forbidden",
    re.IGNORECASE,
)
_AUTH = re.compile(
    r"invalid.?(?:x-)?api.?key|authentication|unauthori[sz]ed|permission.?(?:denied|error)|forbidden"
    r"|incorrect api key|invalid bearer|oauth token",
    re.IGNORECASE,
)
_BAD_REQUEST = re.compile(r"invalid_request|bad request|not_found|not found|unprocessable|invalid", re.I)
_STATUS = re.compile(r"^\s*(?:error code:\s*|status(?: code)?:?\s*|http\s*)?(\d{3})\b", re.IGNORECASE)
_REFUSAL = re.compile(r"^\s*I['’]?m sorry,?\s+(?:but\s+)?I\s+(?:can(?:not|['’]?t)|am unable to|won['’]?t)"
                      r"\s+(?:assist|help)", re.IGNORECASE)
_NO_RETRY_STATUS = frozenset({400, 401, 403, 404, 413, 422})


def _text(message: dict[str, Any]) -> str:
    return str(message.get("errorMessage") or "")


def _status(text: str) -> int | None:
    m = _STATUS.match(text)
    return int(m.group(1)) if m else None


def _output_tokens(message: dict[str, Any]) -> int:
    return int((message.get("usage") or {}).get("output") or 0)


def _overflow_text(text: str) -> bool:
    return bool(text) and bool(_OVERFLOW.search(text)) and not _OVERFLOW_EXCLUDED.search(text)


def is_empty_completion(message: dict[str, Any]) -> bool:
    """A stop/toolUse message with no text, thinking or tool call and zero output tokens."""
    if message.get("stopReason") not in ("stop", "toolUse") or _output_tokens(message):
        return False
    for block in message.get("content") or []:
        kind = block.get("type")
        if kind == "toolCall" or (kind == "text" and block.get("text", "").strip()):
            return False
        if kind == "thinking" and block.get("thinking", "").strip():
            return False
    return True


def is_canned_refusal(message: dict[str, Any]) -> bool:
    """A short (≤120 chars) "I'm sorry, I can't assist…" answer with zero output tokens."""
    if message.get("stopReason") not in ("stop", "toolUse") or _output_tokens(message):
        return False
    blocks = message.get("content") or []
    if any(b.get("type") == "toolCall" for b in blocks):
        return False
    text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text").strip()
    return 0 < len(text) <= 120 and bool(_REFUSAL.match(text))


def is_context_overflow(message: dict[str, Any], context_window: int) -> bool:
    """Whether the context no longer fits: overflow error text, silent overflow, or an empty length stop."""
    reason = message.get("stopReason")
    if reason == "error":
        return _overflow_text(_text(message))
    usage = message.get("usage") or {}
    used = int(usage.get("input") or 0) + int(usage.get("cacheRead") or 0)
    if context_window <= 0:
        return False
    if reason == "stop":
        return used > context_window
    if reason == "length":
        return _output_tokens(message) == 0 and used >= 0.99 * context_window
    return False


def is_length_overflow(message: dict[str, Any], model: dict[str, Any], prompt_estimate: int = 0) -> bool:
    """Whether a ``length`` stop means the context is full (semantics §4.6, "a length stop below maxTokens").

    A reply cut off below the model's ``maxTokens`` is an overflow only when the context really is
    full: the prompt plus the output reached the room the host leaves for a reply, which is the
    context window minus the :data:`REPLY_RESERVE_TOKENS` that ``max_tokens`` is clamped by, give or
    take :data:`LENGTH_FULL_RATIO`. The prompt is the larger of what the provider reported (input +
    cacheRead + cacheWrite) and ``prompt_estimate`` (the host's estimate of the context the reply
    answered), so a clamp computed from an over-estimate still counts. A length stop far below the
    window (a server-side output cap, a small ``max_tokens``) is a plain truncated reply.
    """
    if message.get("stopReason") != "length":
        return False
    window = int(model.get("contextWindow") or 0)
    if window <= 0:
        return False
    usage = message.get("usage") or {}
    output = _output_tokens(message)
    max_tokens = int(model.get("maxTokens") or 0)
    if max_tokens and output >= max_tokens:
        return False  # the model's own output limit, not a full context
    reported = sum(int(usage.get(k) or 0) for k in ("input", "cacheRead", "cacheWrite"))
    prompt = max(reported, prompt_estimate)
    return prompt + output >= LENGTH_FULL_RATIO * max(0, window - REPLY_RESERVE_TOKENS)


def session_retry_delay_ms(message: dict[str, Any], attempt: int, base_delay_ms: int, cap_ms: int) -> int:
    """How long the session waits before auto-retry ``attempt`` (1-based) of a failed message.

    ``base·2^(attempt−1)`` (semantics §3.8), or longer when the server asked for more
    (``retry-after`` / ``retry-after-ms``, kept as the message's ``retryAfterMs``): the server's
    wish, capped by ``retry.provider.maxRetryDelayMs`` (``cap_ms``; 0 = no cap).
    """
    backoff = base_delay_ms * 2 ** max(0, attempt - 1)
    asked = message.get("retryAfterMs")
    if not isinstance(asked, int | float) or isinstance(asked, bool) or not 0 <= asked < float("inf"):
        return backoff  # absent, negative, NaN or infinite: the server's wish is unusable
    asked = int(asked)
    if cap_ms > 0:
        asked = min(asked, cap_ms)
    return max(backoff, asked)


def is_retryable_error(message: dict[str, Any]) -> bool:
    """Whether the same model should be asked again (session auto-retry).

    Never for aborted messages, context overflow, quota exhaustion, auth, bad requests or policy errors.
    Empty completions and canned refusals with zero output are retried.
    """
    reason = message.get("stopReason")
    if reason in ("stop", "toolUse"):
        return is_empty_completion(message) or is_canned_refusal(message)
    if reason != "error":
        return False
    text = _text(message)
    if not text or _overflow_text(text) or _QUOTA.search(text):
        return False
    status = _status(text)
    if status in _NO_RETRY_STATUS:
        return False
    if status is not None and (status in (408, 409, 429) or status >= 500):
        return True
    network = _NETWORK.search(text)
    if _CANCELLED.search(text) and not network:
        return False
    if _NEVER_RETRY.search(text):
        return False
    return bool(_RATE_LIMIT.search(text) or _UNAVAILABLE.search(text) or network)


def classify(message: dict[str, Any]) -> str:
    """One of rate_limit, unavailable, network, overflow, auth, bad_request, aborted, other."""
    if message.get("stopReason") == "aborted":
        return "aborted"
    text = _text(message)
    if not text:
        return "other"
    if _overflow_text(text):
        return "overflow"
    status = _status(text)
    if status in (401, 403) or _AUTH.search(text):
        return "auth"
    if status == 429 or _RATE_LIMIT.search(text) or _QUOTA.search(text):
        return "rate_limit"
    network = _NETWORK.search(text)
    if _CANCELLED.search(text) and not network:
        return "aborted"
    if (status is not None and status >= 500) or _UNAVAILABLE.search(text):
        return "unavailable"
    if status == 408 or network:
        return "network"
    if status in (400, 404, 413, 422) or _BAD_REQUEST.search(text):
        return "bad_request"
    return "other"
