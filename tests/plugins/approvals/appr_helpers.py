"""Helpers for the approvals tests: a scripted model that calls ``write``, ``edit`` and ``bash``,
and a client that answers approval dialogs from a script (as an SDK's ``can_use_tool`` would)."""

from __future__ import annotations

import asyncio
from typing import Any

from agent_helpers import of_type

from atomic_host.testing import Host

OPTIONS = ["Allow once", "Allow for this session", "Deny"]


def call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"type": "toolCall", "name": name, "arguments": arguments, "id": call_id}


class Dialogs:
    """Answers every approval ``select`` with the next scripted reply (a dict of response fields,
    or None to leave it open); records every request."""

    def __init__(self, host: Host, *replies: dict[str, Any] | None) -> None:
        self.host = host
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self._tasks: set[asyncio.Future[Any]] = set()
        host.client.on_event(self._on_event)

    def _on_event(self, event: dict[str, Any]) -> None:
        if event.get("type") != "extension_ui_request" or "approval" not in event:
            return
        self.requests.append(event)
        reply = self.replies.pop(0) if self.replies else {"value": "Allow once"}
        if reply is not None:
            task = asyncio.ensure_future(self.host.client.extension_ui_response(event["id"], **reply))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def asked(self) -> list[str]:
        """The tool call ids asked about, in order."""
        return [r["approval"]["toolCallId"] for r in self.requests]


async def turn(host: Host, *calls: dict[str, Any], timeout: float = 30) -> dict[str, dict[str, Any]]:
    """One prompt: the model makes ``calls`` in one message, then says "done". Returns each call's
    ``tool_execution_end`` by id."""
    host.faux.push({"content": list(calls)}, "done")
    events = await host.client.prompt_and_wait("go", timeout=timeout)
    return {e["toolCallId"]: e for e in of_type(events, "tool_execution_end")}


def text(end: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in end["result"]["content"] if b.get("type") == "text")


def seen_by_model(host: Host, call_id: str) -> str:
    """The tool result for ``call_id`` as the next model request carried it."""
    for request in reversed(host.faux_calls()):
        for message in request["context"]["messages"]:
            if message.get("role") == "toolResult" and message.get("toolCallId") == call_id:
                return "".join(b.get("text", "") for b in message["content"] if b.get("type") == "text")
    raise AssertionError(f"no model request carried the result of {call_id}")


def ui_selects(host: Host) -> list[dict[str, Any]]:
    return [e for e in host.client.events if e.get("type") == "extension_ui_request" and e.get("method") == "select"]
