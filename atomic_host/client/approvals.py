"""Approvals on the client: ``can_use_tool(tool_name, args) -> Allow | Deny`` answers the approvals
plugin's dialog.

The plugin asks with an ``extension_ui_request`` of method ``select`` whose record carries
``"approval": {"toolName", "toolCallId", "args", "diff"?}`` and the options ``Allow once``,
``Allow for this session`` and ``Deny``; a denial's ``message`` is the text the model sees.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ALLOW_ONCE = "Allow once"
ALLOW_SESSION = "Allow for this session"
DENY = "Deny"


@dataclass(frozen=True)
class Allow:
    """Let the tool call run; ``remember=True`` also allows the same call for the rest of the session."""

    remember: bool = False


@dataclass(frozen=True)
class Deny:
    """Refuse the tool call; ``message`` is what the model is told (why, or what to do instead)."""

    message: str = "Denied by the client."


@dataclass(frozen=True)
class ApprovalRequest:
    """The ``approval`` record of a dialog: which call waits for an answer."""

    tool_name: str
    tool_call_id: str
    args: dict[str, Any]
    diff: str | None
    request_id: str
    """The ``extension_ui_request`` id the answer goes to."""


def approval_of(request: dict[str, Any]) -> ApprovalRequest | None:
    """The approval a ``select`` request asks for, or None when it is another dialog."""
    approval = request.get("approval")
    if request.get("method") != "select" or not isinstance(approval, dict):
        return None
    args = approval.get("args")
    diff = approval.get("diff")
    return ApprovalRequest(
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
