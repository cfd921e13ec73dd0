"""Reading the neutral message dicts (``{"role", "content": str | [blocks]}``) without caring which shape."""

from __future__ import annotations

from typing import Any


def message_text(message: dict[str, Any] | None, sep: str = "") -> str:
    """The text blocks of a message's content joined with ``sep`` (a string content as is)."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return sep.join(
        b["text"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )
