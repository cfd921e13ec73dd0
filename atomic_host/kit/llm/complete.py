"""One whole reply from a provider stream, for requests nobody watches stream (summaries, compaction)."""

from __future__ import annotations

import contextlib
import time
from typing import Any

from atomic_host.contract.providers import StreamFn, StreamOptions
from atomic_host.kit import secrets
from atomic_host.kit.llm.usage import empty_usage

__all__ = ["complete"]


def assistant_message(model: dict[str, Any] | None, stop_reason: str, error: str | None = None) -> dict[str, Any]:
    """An empty assistant message for ``model`` (zero usage): the pending one a stream starts from,
    or, with ``error``, one that stands for a request that produced no reply."""
    model = model or {}
    message: dict[str, Any] = {
        "role": "assistant",
        "content": [],
        "api": model.get("api", ""),
        "provider": model.get("provider", ""),
        "model": model.get("id", ""),
        "usage": empty_usage(),
        "stopReason": stop_reason,
        "timestamp": int(time.time() * 1000),
    }
    if error is not None:
        message["errorMessage"] = secrets.mask(error)
    return message


def failed(message: str, model: dict[str, Any] | None = None, reason: str = "error") -> dict[str, Any]:
    """An assistant message that stands for a request that produced no reply."""
    return assistant_message(model, reason, message)


async def complete(
    stream_fn: StreamFn, model: dict[str, Any], context: dict[str, Any], options: StreamOptions
) -> dict[str, Any]:
    """The final assistant message of one request: the ``done`` message, or the ``error`` one
    (``stopReason`` error/aborted). The stream is always closed before this returns."""
    try:
        async with contextlib.aclosing(stream_fn(model, context, options)) as events:
            async for event in events:
                if event.get("type") == "done":
                    return event.get("message") or event.get("partial") or failed("Provider sent no reply")
                if event.get("type") == "error":
                    return event.get("error") or event.get("partial") or failed("Provider error")
    except Exception as exc:  # a provider broke its "never raises" contract
        return failed(f"Provider error: {exc}")
    return failed("Provider sent no reply")
