"""Shared helpers for the compaction end-to-end tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from atomic_host.testing import Host, read_jsonl

LONG_PROMPT = "\n".join(f"requirement {i}: keep the widget number {i} working" for i in range(1, 31))


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e.get("type") == kind]


async def seed(host: Host) -> None:
    """Two user turns: a 30-line first prompt, so the region (all but the last two messages) has 31 lines."""
    host.faux.push("first answer")
    await host.client.prompt_and_wait(LONG_PROMPT)
    host.faux.push("second answer")
    await host.client.prompt_and_wait("now the second thing")


def session_file(host: Host) -> Path:
    files = list((host.agent_dir / "sessions").rglob("*.jsonl"))
    assert len(files) == 1, files
    return files[0]


def file_entries(path: Path) -> list[dict[str, Any]]:
    return read_jsonl(path)[1:]


def write_extension(host: Host, source: str) -> Path:
    path = host.cwd / "compact_ext.py"
    path.write_text(source)
    return path
