"""Internal child sessions: one agent run in a session of its own, on behalf of a plugin (the
workflow stages of semantics §2.2). Its events stay inside the host; the caller gets the outcome."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from atomic_host.contract.errors import HostError
from atomic_host.core.models.refs import parse_model_ref, resolve_model
from atomic_host.core.models.thinking import clamp
from atomic_host.engine.agent_session import AgentSession
from atomic_host.engine.prompting import make_user_message
from atomic_host.kit.messages import message_text

if TYPE_CHECKING:
    from collections.abc import Callable


class _Kept:
    """A child session's events: none reaches the client or the ``on_event`` observers; the
    signals the caller needs are kept."""

    def __init__(self) -> None:
        self.unresolved_overflow = False
        self.overflow_error: str | None = None

    def __call__(self, event: dict[str, Any], line: str | None = None) -> None:
        if event.get("type") == "compaction_end" and event.get("unresolvedOverflow"):
            self.unresolved_overflow = True
            self.overflow_error = event.get("errorMessage") or "Context overflow could not be resolved"


def _resolve(rt: Any, ref: str) -> tuple[dict[str, Any], str | None]:
    _p, _m, level = parse_model_ref(ref)
    model = resolve_model(rt.models, ref)
    if model is None:
        raise HostError(f"Model not found: {ref}")
    return model, level


async def run_internal_session(
    rt: Any,
    owner: AgentSession | None,
    prompt: str,
    *,
    header: dict[str, Any] | None = None,
    model: str | None = None,
    thinking: str | None = None,
    tools: list[str] | None = None,
    signal: asyncio.Event | None = None,
    cwd: str | None = None,
    parent_session: str | None = None,
) -> dict[str, Any]:
    """``api.run_internal_session``: a new child session runs ``prompt`` once. Without ``cwd`` it
    is a child of ``owner`` (the active session: its project, model and thinking level); with
    ``cwd`` it runs headless in that project as a child of ``parent_session``, whatever session
    this process has open (``model`` is then required)."""
    inherited = None
    if cwd is None:
        if owner is None:
            raise HostError("No active session")
        inherited, cwd, parent_session = owner, owner.cwd, owner.session.location
    chosen, level = _resolve(rt, model) if model else (inherited.model if inherited else None, None)
    if chosen is None:
        raise HostError("No model selected. Use set_model, --model or configure an API key.")
    session = rt.store.new_session(cwd, parent_session=parent_session)
    session.header.update(header or {})  # before the first write: the lazy write puts it in line 1
    kept = _Kept()
    child = AgentSession(rt, session, emit=kept)  # type: ignore[arg-type]  # an Emitter by shape
    child.model = chosen
    child.thinking_level = clamp(chosen, thinking or level or (inherited.thinking_level if inherited else "medium"))
    child.active.tool_names = set(tools) if tools is not None else None
    child.active.state.record_initial()
    result: dict[str, Any] = {
        "sessionId": session.id,
        "sessionFile": session.location,
        "model": f"{chosen['provider']}/{chosen['id']}",
        "text": "",
        "stopReason": "error",
        "unresolvedOverflow": False,
    }
    try:
        child.require_model()
    except HostError as exc:
        return {**result, "errorMessage": str(exc)}
    watcher: asyncio.Task[Any] | None = None
    if signal is not None:

        async def watch() -> None:
            await signal.wait()
            await child.abort()

        watcher = asyncio.create_task(watch())
    try:
        child.start_drive([make_user_message(prompt, None)], None)
        await child.wait_idle()
    finally:
        if watcher is not None:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
        session.close()
    last = next((m for m in reversed(child.messages) if m.get("role") == "assistant"), None)
    if last is not None:
        result["text"] = message_text(last)
        result["stopReason"] = last.get("stopReason") or "stop"
        result["model"] = f"{last.get('provider', chosen['provider'])}/{last.get('model', chosen['id'])}"
        if last.get("errorMessage"):
            result["errorMessage"] = last["errorMessage"]
    else:
        result["errorMessage"] = "The stage ended without an answer"
    if kept.unresolved_overflow:
        result["unresolvedOverflow"] = True
        result["stopReason"] = "error"
        result.setdefault("errorMessage", kept.overflow_error)
    return result


def append_to_stored_session(
    rt: Any,
    location: str,
    entry: dict[str, Any],
    unless: Callable[[list[dict[str, Any]]], bool] | None = None,
) -> bool:
    """``api.append_to_session``: append ``entry`` (a ``custom_message``'s fields) to the stored
    session at ``location`` under its write lock, unless ``unless(entries)`` says it is there
    already (read under the lock). Blocking: call it in a thread. Raises ``SessionLocked`` while
    another process has the session open, ``SessionNotFound`` when this store has no such session."""
    first = rt.store.open_path(location)
    try:
        take_lock = getattr(first.writer, "lock", None)
        if take_lock is not None:
            take_lock()
        session = rt.store.open_path(location)  # read again under the lock: what is there now
        try:
            if unless is not None and unless(list(session.entries)):
                return False
            session.append("custom_message", **entry)
            return True
        finally:
            session.close()
    finally:
        first.close()
