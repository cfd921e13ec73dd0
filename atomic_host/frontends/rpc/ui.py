"""The extension UI sub-protocol over RPC: ``extension_ui_request`` out, ``extension_ui_response`` in."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from atomic_host.contract.tools import APPROVAL_OPTIONS, Approval, ApprovalAnswer
from atomic_host.frontends.rpc.io import Output
from atomic_host.frontends.rpc.server import release_lane
from atomic_host.kit.log import log
from atomic_host.kit.sessions.ids import uuid4


class FireAndForgetUI:
    """The UI methods that need no answer, as the protocol names them (semantics §1): a frontend
    supplies ``_fire(method, **fields)`` to deliver them its own way."""

    def _fire(self, method: str, **fields: Any) -> None:
        raise NotImplementedError

    def notify(self, message: str, notify_type: str = "info") -> None:
        self._fire("notify", message=message, notifyType=notify_type)

    def set_status(self, key: str, text: str | None) -> None:
        self._fire("setStatus", statusKey=key, statusText=text)

    def set_widget(self, key: str, lines: list[str] | None, placement: str = "aboveEditor") -> None:
        self._fire("setWidget", widgetKey=key, widgetLines=lines, widgetPlacement=placement)

    def set_title(self, title: str) -> None:
        self._fire("setTitle", title=title)

    def set_editor_text(self, text: str) -> None:
        self._fire("set_editor_text", text=text)


class RpcUI(FireAndForgetUI):
    """Dialogs wait for the client's answer (with timeout → default); the rest is fire and forget."""

    def __init__(self, out: Output, has_ui: bool = True) -> None:
        self.out = out
        self.has_ui = has_ui
        self.pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.closed = False
        """Set by :meth:`close`: nobody is left to answer, dialogs end as cancelled at once."""

    async def _dialog(self, method: str, timeout: float | None, **fields: Any) -> dict[str, Any] | None:
        if self.closed:
            return {"cancelled": True}
        req_id = uuid4()
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[req_id] = fut
        request = {"type": "extension_ui_request", "id": req_id, "method": method, **fields}
        if timeout is not None:
            request["timeout"] = int(timeout * 1000)
        self.out.send(request)
        # A client may ignore the request (clients skip records they do not know): the command
        # that asked must not keep other commands from being served meanwhile.
        release_lane()
        try:
            return await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            return None
        finally:
            self.pending.pop(req_id, None)

    def resolve(self, response: dict[str, Any]) -> bool:
        """Deliver a client response; unknown ids are dropped silently (returns False)."""
        fut = self.pending.get(str(response.get("id")))
        if fut is None or fut.done():
            return False
        fut.set_result(response)
        return True

    def cancel_all(self) -> None:
        """Answer every open dialog as cancelled (``abort``, the host exiting): the extension gets
        the default (None for select/input/editor, False for confirm)."""
        for fut in self.pending.values():
            if not fut.done():
                fut.set_result({"cancelled": True})

    def close(self) -> None:
        """stdin is closed: open dialogs end as cancelled, and so does every later one, at once."""
        self.closed = True
        self.cancel_all()

    # An answer of the wrong kind (a select value that is not one of its options, a confirm that
    # is not a boolean, a text that is not a string) counts as cancelled: an extension never sees
    # a value it did not offer or cannot handle.

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None:
        r = await self._dialog("select", timeout, title=title, options=options)
        value = _answer(r, "value", str, "select")
        if value is not None and value not in options:
            log.warning(f"extension_ui_response: select answered {value[:200]!r}, not one of its options; cancelled")
            return None
        return value

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None) -> bool:
        r = await self._dialog("confirm", timeout, title=title, message=message)
        return _answer(r, "confirmed", bool, "confirm") is True

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None) -> str | None:
        r = await self._dialog("input", timeout, title=title, placeholder=placeholder)
        return _answer(r, "value", str, "input")

    async def editor(self, title: str, prefill: str = "", *, timeout: float | None = None) -> str | None:
        r = await self._dialog("editor", timeout, title=title, prefill=prefill)
        return _answer(r, "value", str, "editor")

    async def approve(self, approval: Approval, *, timeout: float | None = None) -> ApprovalAnswer:
        """A ``select`` carrying the ``approval`` record; the answer as docs/permissions.md reads it."""
        if not self.has_ui:
            return ApprovalAnswer("deny", why=f"--mode {MODE_WITHOUT_UI} has no one to ask", unasked=True)
        record: dict[str, Any] = {
            "toolName": approval.tool_name,
            "toolCallId": approval.tool_call_id,
            "args": approval.args,
        }
        if approval.diff is not None:
            record["diff"] = approval.diff
        if approval.scope is not None:
            record["scope"] = approval.scope
        r = await self._dialog("select", timeout, title=approval.title, options=list(APPROVAL_OPTIONS), approval=record)
        return approval_answer(r, timeout)

    def _fire(self, method: str, **fields: Any) -> None:
        self.out.send({"type": "extension_ui_request", "id": uuid4(), "method": method, **fields})


MODE_WITHOUT_UI = "json"
"""The mode that runs an RpcUI without dialogs (``has_ui`` False): events out, nothing answers."""


def approval_answer(response: dict[str, Any] | None, timeout: float | None) -> ApprovalAnswer:
    """An ``extension_ui_response`` to an approval ``select`` (None: it timed out) as an answer:
    anything but one of the options is a denial that says why."""
    if response is None:
        return ApprovalAnswer("deny", why=f"the approval request timed out after {round((timeout or 0) * 1000)} ms")
    if response.get("cancelled"):
        return ApprovalAnswer("deny", why="the approval request was cancelled")
    value = response.get("value")
    if value == APPROVAL_OPTIONS[0]:
        return ApprovalAnswer("once")
    if value == APPROVAL_OPTIONS[1]:
        return ApprovalAnswer("session")
    if value == APPROVAL_OPTIONS[2]:
        message = response.get("message")
        return ApprovalAnswer("deny", message=message if isinstance(message, str) and message.strip() else None)
    shown = json.dumps(value, ensure_ascii=False)
    shown = shown if len(shown) <= 80 else shown[:80] + "…"
    return ApprovalAnswer("deny", why=f"the answer {shown} is not one of the options")


def _answer(response: dict[str, Any] | None, key: str, kind: type, method: str) -> Any:
    """``response[key]`` when the dialog was answered with a value of ``kind``; None when it timed
    out, was cancelled, or was answered with something else (logged)."""
    if response is None or response.get("cancelled"):
        return None
    value = response.get(key)
    if isinstance(value, kind):
        return value
    log.warning(f"extension_ui_response: {method} answered with {key}={_short(value)}; treated as cancelled")
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "…"
