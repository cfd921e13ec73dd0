"""Small helpers shared by the agent tests."""

from __future__ import annotations

import json
from typing import Any

from atomic_host.testing import Host

FAST_RETRY = {"retry": {"enabled": True, "maxRetries": 3, "baseDelayMs": 50}}


def kinds(events: list[dict[str, Any]], skip_updates: bool = True) -> list[str]:
    """Event types, without ``message_update`` (and role-suffixed for message events)."""
    out = []
    for e in events:
        t = e["type"]
        if skip_updates and t == "message_update":
            continue
        if t in ("message_start", "message_end"):
            t = f"{t}:{e['message']['role']}"
        out.append(t)
    return out


def of_type(events: list[dict[str, Any]], type_: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == type_]


def line_index(host: Host, predicate: Any) -> int:
    """Index of the first stdout line whose record matches ``predicate``."""
    for i, line in enumerate(host.client.lines):
        if predicate(json.loads(line)):
            return i
    raise AssertionError("no such line")


def text_of(message: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in message.get("content", []) if b.get("type") == "text")


def bash_call(command: str, call_id: str | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "toolCall", "name": "bash", "arguments": {"command": command}}
    if call_id:
        block["id"] = call_id
    return block
