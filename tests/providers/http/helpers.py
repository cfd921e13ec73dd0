"""Small shared helpers for the provider tests."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import AsyncIterator
from typing import Any


class SilentServer:
    """Accepts connections and never answers (a TLS handshake or a response that never comes)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                self.held.append(self.sock.accept()[0])

    def close(self) -> None:
        self.sock.close()
        for s in self.held:
            s.close()


async def collect(stream: AsyncIterator[dict[str, Any]]) -> list[dict[str, Any]]:
    """All events of a stream, checking the one-terminal-event contract on the way."""
    events = [e async for e in stream]
    terminals = [e for e in events if e["type"] in ("done", "error")]
    assert len(terminals) == 1 and events[-1] is terminals[0], [e["type"] for e in events]
    return events


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def final(events: list[dict[str, Any]]) -> dict[str, Any]:
    last = events[-1]
    return last["message"] if last["type"] == "done" else last["error"]


def anthropic_model(base_url: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": "claude-sonnet-4-5",
        "name": "Claude Sonnet 4.5",
        "api": "anthropic-messages",
        "provider": "anthropic",
        "baseUrl": base_url,
        "reasoning": True,
        "input": ["text", "image"],
        "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
        "contextWindow": 200000,
        "maxTokens": 64000,
        **extra,
    }


def openai_model(base_url: str, api: str = "openai-completions", **extra: Any) -> dict[str, Any]:
    return {
        "id": "gpt-test",
        "name": "GPT test",
        "api": api,
        "provider": "openai",
        "baseUrl": base_url,
        "reasoning": True,
        "input": ["text", "image"],
        "cost": {"input": 1.25, "output": 10, "cacheRead": 0.125, "cacheWrite": 0},
        "contextWindow": 400000,
        "maxTokens": 128000,
        **extra,
    }


SIMPLE_CONTEXT: dict[str, Any] = {
    "systemPrompt": "You are terse.",
    "messages": [{"role": "user", "content": "hi", "timestamp": 1}],
    "tools": [],
}
