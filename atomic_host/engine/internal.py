"""Internal child sessions: one agent run in a session of its own, on behalf of a plugin (the
workflow stages of semantics §2.2). Its events stay inside the host; the caller gets the outcome."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from atomic_host.contract.errors import HostError
from atomic_host.engine.agent_session import AgentSession
from atomic_host.engine.prompting import make_user_message
from atomic_host.kit.messages import message_text


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
    from atomic_host.core.models.refs import parse_model_ref, resolve_model

    _p, _m, level = parse_model_ref(ref)
    model = resolve_model(rt.models, ref)
    if model is None:
        raise HostError(f"Model not found: {ref}")
    return model, level


async def run_internal_session(
    owner: AgentSession,
    prompt: str,
    *,
    header: dict[str, Any] | None = None,
    model: str | None = None,
    thinking: str | None = None,
    tools: list[str] | None = None,
    signal: asyncio.Event | None = None,
) -> dict[str, Any]:
    """``api.run_internal_session``: a new child session of ``owner`` runs ``prompt`` once."""
    from atomic_host.core.models.thinking import clamp

    rt = owner.rt
    chosen, level = _resolve(rt, model) if model else (owner.model, None)
    if chosen is None:
        raise HostError("No model selected. Use set_model, --model or configure an API key.")
    session = rt.store.new_session(owner.cwd, parent_session=owner.session.location)
    session.header.update(header or {})  # before the first write: the lazy write puts it in line 1
    kept = _Kept()
    child = AgentSession(rt, session, emit=kept)  # type: ignore[arg-type]  # an Emitter by shape
    child.model = chosen
    child.thinking_level = clamp(chosen, thinking or level or owner.thinking_level)
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
