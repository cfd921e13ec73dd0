"""One whole reply from a provider stream, for requests nobody watches stream (summaries, compaction)."""

from __future__ import annotations

import contextlib
import time
from typing import Any

from atomic_host.llm.types import StreamFn, StreamOptions


def failed(message: str) -> dict[str, Any]:
    """An assistant message that stands for a request that produced no reply."""
    return {
        "role": "assistant",
        "content": [],
        "stopReason": "error",
        "errorMessage": message,
        "timestamp": int(time.time() * 1000),
    }


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


def text_of(message: dict[str, Any]) -> str:
    """The concatenated text blocks of an assistant message."""
    return "".join(b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text")
