"""Helpers for the session storage tests: message builders and a chat writer."""

from __future__ import annotations

import itertools
from typing import Any

CWD = "/home/u/proj"
_clock = itertools.count(1_700_000_000_000, 1000)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": next(_clock)}


def assistant(text: str = "ok", *, tool_calls: list[tuple[str, str]] = (), stop: str | None = None) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    content += [{"type": "toolCall", "id": i, "name": n, "arguments": {"path": "a"}} for i, n in tool_calls]
    return {
        "role": "assistant",
        "content": content,
        "api": "faux",
        "provider": "faux",
        "model": "faux-1",
        "usage": {
            "input": 10,
            "output": 5,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 15,
            "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0, "total": 0.3},
        },
        "stopReason": stop or ("toolUse" if tool_calls else "stop"),
        "timestamp": next(_clock),
    }


def tool_result(call_id: str, text: str = "done", name: str = "read") -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": next(_clock),
    }


def chat(store, turns: int = 2):
    """A saved session: model, thinking level, then user/assistant turns."""
    session = store.new_session(CWD)
    session.append_model_change("faux", "faux-1")
    session.append_thinking_level_change("off")
    for i in range(turns):
        session.append_message(user(f"question {i}"))
        session.append_message(assistant(f"answer {i}"))
    return session
