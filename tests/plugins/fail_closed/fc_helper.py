"""Helpers for the fail-closed gate tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_helpers import of_type

from atomic_host.testing import Host

HERE = Path(__file__).parent
GUARD = str(HERE / "fc_guard.py")


def bash_step(command: str, call_id: str = "b1") -> dict[str, Any]:
    return {"content": [{"type": "toolCall", "name": "bash", "arguments": {"command": command}, "id": call_id}]}


def line_of(path: str, text: str) -> int:
    """The number of the first line of ``path`` that contains ``text``."""
    return next(i for i, line in enumerate(Path(path).read_text().splitlines(), 1) if text in line)


def blocked(path: str, why: str) -> str:
    """The error result of a tool call a failed fail-closed gate blocked."""
    return f"Tool call blocked: the tool_call gate of {path} failed and fails closed: {why}"


async def run_bash(host: Host, command: str) -> tuple[dict[str, Any], list[tuple[str, str, str]]]:
    """Have the model call bash with ``command``; (its tool_execution_end, the extension errors meanwhile)."""
    n0 = len(host.client.events)
    host.faux.push(bash_step(command), "ok")
    events = await host.client.prompt_and_wait("run it", timeout=30)
    errors = [(e["extensionPath"], e["event"], e["error"]) for e in of_type(events, "extension_error")]
    assert len(host.client.events) > n0
    return of_type(events, "tool_execution_end")[0], errors


def result_text(end: dict[str, Any]) -> str:
    return end["result"]["content"][0]["text"]
