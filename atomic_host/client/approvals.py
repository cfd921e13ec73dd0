"""Approvals on the client: ``can_use_tool(tool_name, args) -> Allow | Deny`` answers the approvals
plugin's dialog.

The plugin asks with an ``extension_ui_request`` of method ``select`` whose record carries
``"approval": {"toolName", "toolCallId", "args", "diff"?}`` and the options ``Allow once``,
``Allow for this session`` and ``Deny``; a denial's ``message`` is the text the model sees.
"""

from __future__ import annotations

from typing import Any

ALLOW_ONCE = "Allow once"
ALLOW_SESSION = "Allow for this session"
DENY = "Deny"


class Allow:
    """Let the tool call run; ``remember=True`` also allows the same call for the rest of the session."""

    __slots__ = ("remember",)

    def __init__(self, remember: bool = False) -> None:
        self.remember = remember

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Allow) and other.remember == self.remember

    def __hash__(self) -> int:
        return hash((Allow, self.remember))

    def __repr__(self) -> str:
        return f"Allow(remember={self.remember!r})"


class Deny:
    """Refuse the tool call; ``message`` is what the model is told (why, or what to do instead)."""

    __slots__ = ("message",)

    def __init__(self, message: str = "Denied by the client.") -> None:
        self.message = message

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Deny) and other.message == self.message

    def __hash__(self) -> int:
        return hash((Deny, self.message))

    def __repr__(self) -> str:
        return f"Deny(message={self.message!r})"


class ApprovalAsk:
    """The ``approval`` record of a dialog: which call waits for an answer, and the
    ``extension_ui_request`` id the answer goes to."""

    __slots__ = ("args", "diff", "request_id", "tool_call_id", "tool_name")

    def __init__(self, tool_name: str, tool_call_id: str, args: dict[str, Any], diff: str | None, request_id: str):
        self.tool_name, self.tool_call_id, self.args = tool_name, tool_call_id, args
        self.diff, self.request_id = diff, request_id


def approval_of(request: dict[str, Any]) -> ApprovalAsk | None:
    """The approval a ``select`` request asks for, or None when it is another dialog."""
    approval = request.get("approval")
    if request.get("method") != "select" or not isinstance(approval, dict):
        return None
    args = approval.get("args")
    diff = approval.get("diff")
    return ApprovalAsk(
        tool_name=str(approval.get("toolName", "")),
        tool_call_id=str(approval.get("toolCallId", "")),
        args=args if isinstance(args, dict) else {},
        diff=diff if isinstance(diff, str) else None,
        request_id=str(request.get("id")),
    )


def answer_of(decision: object) -> dict[str, Any]:
    """The ``extension_ui_response`` fields for a decision. Anything but ``Allow`` denies: a gate
    that cannot say yes must not let the call through."""
    if isinstance(decision, Allow):
        return {"value": ALLOW_SESSION if decision.remember else ALLOW_ONCE}
    if isinstance(decision, Deny):
        return {"value": DENY, "message": decision.message}
    return {"value": DENY, "message": f"can_use_tool returned {decision!r}, not Allow or Deny: denied"}
