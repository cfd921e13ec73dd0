"""Shared helpers of the Gemini provider tests: fixture replies, models.json, event filters.

The fixtures under ``fixtures/`` are the project's own, written in the shape the Gemini API streams
(``alt=sse``): one whole ``GenerateContentResponse`` per ``data:`` line, Google's JSON spacing, raw
UTF-8, ``\\r\\n`` frame ends, a running ``usageMetadata``, the ``finishReason`` in the last frame and
no end marker; error bodies are Google's ``{"error": {"code", "message", "status", "details"}}``.
Replies are served by the real local SSE server (:mod:`atomic_host.testing_sse`) in 5-byte
pieces, so UTF-8 characters and frames are split across reads as on a real connection.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from atomic_host import testing_sse as sse

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
PIECE = 5
KEY = "gem-fixture-key-9f1c"
QUIET = {"sessionSummary": {"enabled": False}}  # no background summary request takes a queued reply
FAST_RETRY: dict[str, Any] = {"retry": {"enabled": True, "maxRetries": 3, "baseDelayMs": 50}, **QUIET}
FLASH = "gemini-2.5-flash"
SIG_TEXT = "CpwCAdHtim9fx1TextSignatureAAAA0123456789abcdefOnlyForTests+/w=="
SIG_CALL = "CiQB0e2Kb1fxFunctionCallSignatureBBBB9876543210OnlyForTests=="



def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def pieces(data: bytes, size: int = PIECE) -> list[bytes]:
    return sse.pieces(data, size)


def stream_reply(name: str, size: int = PIECE) -> Any:
    return sse.recorded_stream(FIXTURES / name, size)


def error_reply(status: int, name: str, headers: dict[str, str] | None = None) -> Any:
    return sse.recorded_error(status, FIXTURES / name, headers)


def write_models(agent_dir: Path, base_url: str, **provider: Any) -> None:
    """models.json that reroutes the built-in ``google`` provider (its catalog models) to ``base_url``."""
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"google": {"baseUrl": base_url, **provider}}}))


def gemini_model(base_url: str, model_id: str = FLASH, **extra: Any) -> dict[str, Any]:
    """A model dict as the registry gives it, for in-process parser tests."""
    return {
        "id": model_id,
        "api": "google-generative-ai",
        "provider": "google",
        "baseUrl": base_url,
        "reasoning": True,
        "input": ["text", "image"],
        "cost": {"input": 0.3, "output": 2.5, "cacheRead": 0.03, "cacheWrite": 0},
        "contextWindow": 1048576,
        "maxTokens": 65536,
        **extra,
    }


def of_type(events: list[dict[str, Any]], type_: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == type_]


def assistants(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Final assistant messages (``message_end``) in event order."""
    return [e["message"] for e in of_type(events, "message_end") if e["message"]["role"] == "assistant"]


def tool_results(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["message"] for e in of_type(events, "message_end") if e["message"]["role"] == "toolResult"]


def blocks(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [b for b in message.get("content") or [] if b.get("type") == kind]


def text_of(message: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in blocks(message, "text"))


def updates(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """The ``assistantMessageEvent``s of ``message_update`` events of one kind (``text_delta`` …)."""
    return [e["assistantMessageEvent"] for e in of_type(events, "message_update")
            if e["assistantMessageEvent"]["type"] == kind]  # fmt: skip
