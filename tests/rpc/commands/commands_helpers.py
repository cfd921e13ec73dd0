"""Helpers for the prompt-template and skill tests."""

from __future__ import annotations

from pathlib import Path

from atomic_host.testing import Host


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def last_user_text(host: Host) -> str:
    """The text of the last user message the faux provider was called with."""
    calls = host.faux_calls()
    assert calls, "the provider was never called"
    users = [m for m in calls[-1]["context"]["messages"] if m["role"] == "user"]
    content = users[-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(b["text"] for b in content if b["type"] == "text")
