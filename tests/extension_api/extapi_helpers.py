"""Helpers of the extension API tests: OpenAI-chat replies, a models.json at the scripted server,
plugin files written to disk, and reading what a plugin logged."""

from __future__ import annotations

import asyncio
import json
import textwrap
import time
from pathlib import Path
from typing import Any

from atomic_host import testing_sse as sse

QUIET = {"sessionSummary": {"enabled": False}, "retry": {"enabled": True, "baseDelayMs": 50, "maxRetries": 2}}
"""No background summary request (it would race the request counts), fast session retries."""


def chat_reply(text: str) -> list[Any]:
    """A 200 OpenAI chat-completions SSE stream answering ``text``."""

    def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
        choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
        return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m1", "choices": choices, **extra}

    return sse.openai_chat_frames(
        [
            chunk({"role": "assistant", "content": ""}),
            chunk({"content": text}),
            chunk({}, finish="stop"),
            chunk(None, usage={"prompt_tokens": 20, "completion_tokens": 3, "total_tokens": 23}),
        ]
    )


def write_models(agent_dir: Path, base_url: str, headers: dict[str, str] | None = None) -> None:
    """models.json: provider ``local`` (OpenAI chat) with model ``m1`` at ``base_url``."""
    agent_dir.mkdir(parents=True, exist_ok=True)
    provider: dict[str, Any] = {
        "baseUrl": base_url,
        "api": "openai-completions",
        "apiKey": "dummy-key-123",
        "models": [{"id": "m1", "maxTokens": 8000}],
    }
    if headers:
        provider["headers"] = headers
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"local": provider}}))


def plugin(path: Path, source: str) -> Path:
    """Write a plugin file (``source`` dedented) and return its path."""
    path.write_text(textwrap.dedent(source))
    return path


def read_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def until(predicate: Any, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


def errors(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e.get("type") == "extension_error"]
