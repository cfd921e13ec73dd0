"""Helpers for the run-control and plugin-fault tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_helpers import of_type, text_of

from atomic_host.testing import Host, read_jsonl

HERE = Path(__file__).parent


def ext(name: str) -> str:
    """Path of one of the extension files next to this module."""
    return str(HERE / f"{name}.py")


def user_texts(events: list[dict[str, Any]]) -> list[str]:
    return [text_of(e["message"]) for e in of_type(events, "message_start") if e["message"]["role"] == "user"]


def delivered(events: list[dict[str, Any]]) -> list[str]:
    """``role:text`` of each user/custom message delivered (message_end), in order."""
    out = []
    for e in of_type(events, "message_end"):
        m = e["message"]
        if m["role"] == "user":
            out.append(f"user:{text_of(m)}")
        elif m["role"] == "custom":
            out.append(f"custom:{m['content'] if isinstance(m['content'], str) else text_of(m)}")
    return out


def sequence(events: list[dict[str, Any]]) -> list[str]:
    """Event types without message_update / queue_update / UI requests; message events carry the
    role, and user/custom ones their text."""
    out = []
    for e in events:
        t = e["type"]
        if t in ("message_update", "queue_update", "extension_ui_request"):
            continue
        if t in ("message_start", "message_end"):
            m = e["message"]
            t = f"{t}:{m['role']}"
            if m["role"] == "user":
                t += f":{text_of(m)}"
            elif m["role"] == "custom":
                t += f":{m['content'] if isinstance(m['content'], str) else text_of(m)}"
        out.append(t)
    return out


def notes(host: Host) -> list[str]:
    """What the runf_sender extension reported with ``api.ui.notify``."""
    return [
        e["message"]
        for e in of_type(host.client.events, "extension_ui_request")
        if e.get("method") == "notify" and str(e.get("message", "")).startswith("runf:")
    ]


def extension_errors(host: Host) -> list[dict[str, Any]]:
    return of_type(host.client.events, "extension_error")


async def session_records(host: Host) -> list[str]:
    """The session file's message and custom_message entries, as ``role:text`` / ``custom:text``."""
    state = await host.client.get_state()
    out = []
    for entry in read_jsonl(state["sessionLocation"]):
        if entry["type"] == "message":
            m = entry["message"]
            label = text_of(m) if m["role"] in ("user", "assistant") else m.get("toolName", "")
            out.append(f"{m['role']}:{label}")
        elif entry["type"] == "custom_message":
            content = entry["content"]
            out.append(f"custom:{content if isinstance(content, str) else text_of(entry)}")
    return out


def gate_call(call_id: str = "g1") -> dict[str, Any]:
    """A faux step whose assistant calls the runf_gate tool."""
    return {"content": [{"type": "toolCall", "name": "runf_gate", "arguments": {}, "id": call_id}]}


def tool_step(name: str, call_id: str = "t1") -> dict[str, Any]:
    return {"content": [{"type": "toolCall", "name": name, "arguments": {}, "id": call_id}]}
