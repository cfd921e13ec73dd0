"""Session navigation: new, switch, import, fork, clone and navigate_tree on the runtime's active session.

Every frontend (RPC, ACP, print mode) navigates through these functions, so every one of them fires
the same hooks through the dispatcher (``rt.hooks``): ``session_before_switch`` /
``session_before_fork`` / ``session_before_tree`` may cancel (the first ``Cancel`` wins), then the
old session shuts down (``session_shutdown``), the new one becomes active (``session_start``), or,
for ``navigate_tree``, the leaf moves and ``session_tree`` observes it.

Errors are :class:`HostError` with the protocol's texts; a cancelled navigation is a result, not
an error (the caller answers ``{"cancelled": true}``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from atomic_host.contract.errors import HostError
from atomic_host.contract.events import (
    SessionBeforeForkEvent,
    SessionBeforeSwitchEvent,
    SessionBeforeTreeEvent,
    SessionTreeEvent,
)
from atomic_host.contract.records import record
from atomic_host.engine.agent_session import AgentSession
from atomic_host.engine.branch_summary import abandoned_path, summarize_entries
from atomic_host.engine.services import HostServices
from atomic_host.kit.messages import message_text
from atomic_host.kit.sessions.errors import SessionNotFound

if TYPE_CHECKING:
    from atomic_host.kit.sessions.tree import Session


class NavigationHost(HostServices, Protocol):
    """What navigation needs of the runtime: its services (the store, the hooks, the active session)."""

    def require_session(self) -> AgentSession:
        """The active session (raises when there is none)."""
        ...


@record
class Forked:
    """The outcome of :func:`fork`: the forked-from prompt's text, and whether a plugin cancelled."""

    text: str
    cancelled: bool


@record
class TreeMove:
    """The outcome of :func:`navigate_tree`."""

    cancelled: bool
    editor_text: str | None = None
    """The re-edited prompt's text, when the target was a user prompt (or custom message)."""
    summary_entry: dict[str, Any] | None = None
    """The ``branch_summary`` entry appended for the abandoned path, when one was written."""

    def wire(self) -> dict[str, Any]:
        """``navigate_tree``'s response data: ``{cancelled, summaryEntry?, editorText?}``."""
        data: dict[str, Any] = {"cancelled": self.cancelled}
        if self.summary_entry is not None:
            data["summaryEntry"] = self.summary_entry
        if self.editor_text is not None:
            data["editorText"] = self.editor_text
        return data


# --- making a session the active one ---


async def activate(rt: NavigationHost, session: Session, reason: str, *, fresh: bool, cwd: str | None = None) -> None:
    """Make ``session`` the active one, without asking plugins first: the old one shuts down,
    model/thinking and the queue/retry/compaction modes carry over (or, unless ``fresh``, the
    model is restored from the branch), then ``session_start`` fires."""
    old = rt.session
    previous = old.session.location if old else None
    if old is not None:
        await old.close(reason)
    agent = AgentSession(rt, session)
    if cwd:
        agent.cwd = cwd
    if old is not None:
        agent.model, agent.thinking_level = old.model, old.thinking_level
        agent.queues.steering_mode, agent.queues.follow_up_mode = old.queues.steering_mode, old.queues.follow_up_mode
        agent.active.auto_retry, agent.active.auto_compaction = old.active.auto_retry, old.active.auto_compaction
    agent.rebuild_context(restore_model=not fresh)
    if fresh:
        agent.active.state.record_initial()
    rt.session = agent
    await agent.fire_session_start(reason, previous)


async def _cancelled(rt: NavigationHost, hook: str, event: Any) -> bool:
    """True when a plugin returned ``Cancel`` (the hook's rule is ``first_cancel``)."""
    return await rt.hooks.acall(hook, event=event) is not None


# --- new, switch, import ---


async def new_session(rt: NavigationHost, *, parent_session: str | None = None, cwd: str | None = None) -> bool:
    """Start a fresh session (in ``cwd``, default the active session's); False when a plugin cancelled."""
    if await _cancelled(rt, "session_before_switch", SessionBeforeSwitchEvent("new")):
        return False
    session = rt.store.new_session(cwd or rt.require_session().cwd, parent_session=parent_session)
    await activate(rt, session, "new", fresh=True, cwd=cwd)
    return True


async def open_session(
    rt: NavigationHost, *, session_id: str | None = None, path: str | None = None, directory: str | None = None
) -> Session:
    """Find and load a stored session by id (in ``directory`` only, when given) or by file path.

    Runs in a thread: a long session file takes tens of milliseconds to read and parse, and the
    loop keeps answering abort meanwhile.
    """
    store = rt.store
    try:
        if session_id:
            return await asyncio.to_thread(store.open, session_id, directory)
        if path:
            return await asyncio.to_thread(store.open_path, path)
    except SessionNotFound as exc:
        raise HostError(str(exc) or f"Session not found: {session_id}") from None
    except (ValueError, OSError) as exc:  # not a session id (path parts, "..", NUL), not a session file
        raise HostError(str(exc)) from None
    raise HostError("switch_session requires sessionId")


async def switch_session(rt: NavigationHost, session: Session, *, cwd: str | None = None) -> bool:
    """Resume a loaded session (``cwd`` overrides its header's); False when a plugin cancelled."""
    if await _cancelled(rt, "session_before_switch", SessionBeforeSwitchEvent("resume", session.location)):
        return False
    await activate(rt, session, "resume", fresh=False, cwd=cwd)
    return True


async def import_session(rt: NavigationHost, input_path: str, *, cwd: str | None = None) -> bool:
    """Copy a session file into the store and resume it; False when a plugin cancelled."""
    path = Path(input_path).expanduser()
    if not path.is_file():
        raise HostError(f"File not found: {path}")
    if await _cancelled(rt, "session_before_switch", SessionBeforeSwitchEvent("resume", str(path))):
        return False
    session = await asyncio.to_thread(rt.store.import_file, path, cwd)
    await activate(rt, session, "resume", fresh=False, cwd=cwd)
    return True


# --- fork and clone ---


async def fork(rt: NavigationHost, entry_id: str) -> Forked:
    """A new session holding the path up to the parent of user prompt ``entry_id``."""
    session = rt.require_session().session
    entry = session.get_entry(entry_id)
    message = (entry or {}).get("message")
    message = message if isinstance(message, dict) else {}  # a hand-made file's message may be anything
    if not entry or entry.get("type") != "message" or message.get("role") != "user":
        raise HostError("Invalid entry ID for forking")
    text = message_text(message)
    if await _cancelled(rt, "session_before_fork", SessionBeforeForkEvent(entry_id, "before")):
        return Forked(text, True)
    forked = await asyncio.to_thread(rt.store.fork, session, entry_id)  # a store write (postgres: round trips)
    await activate(rt, forked, "fork", fresh=False)
    return Forked(text, False)


async def clone(rt: NavigationHost) -> bool:
    """A new session holding the active branch up to the leaf; False when a plugin cancelled."""
    session = rt.require_session().session
    if session.leaf_id is None:
        raise HostError("Cannot clone session: no current entry selected")
    if await _cancelled(rt, "session_before_fork", SessionBeforeForkEvent(session.leaf_id, "at")):
        return False
    cloned = await asyncio.to_thread(rt.store.clone, session)  # a store write, off the loop as fork's
    await activate(rt, cloned, "fork", fresh=False)
    return True


# --- moving in the tree ---


async def navigate_tree(
    rt: NavigationHost,
    target_id: str,
    *,
    summarize: bool = False,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    label: str | None = None,
) -> TreeMove:
    """Move the active session's leaf to ``target_id`` (semantics §2.5 navigate_tree).

    A user prompt or custom message as target moves the leaf to its parent and gives its text back
    for re-editing. With ``summarize`` the abandoned path is summarised into a ``branch_summary``
    entry under the new leaf. ``session_before_tree`` may cancel; ``session_tree`` follows the move.
    """
    agent = rt.require_session()
    if agent.is_streaming:
        raise HostError("Cannot navigate the tree while the agent is streaming")
    agent.summarizer.cancel()
    entry = agent.session.get_entry(target_id)
    if entry is None:
        raise HostError(f"Entry {target_id} not found")
    message = entry.get("message")
    message = message if isinstance(message, dict) else {}
    kind = entry.get("type")
    editor_text = None
    new_leaf = target_id
    if (kind == "message" and message.get("role") == "user") or kind == "custom_message":
        # Re-editing a prompt: the leaf moves to its parent and the client gets the text back.
        content = entry.get("content")
        editor_text = message_text(message) if kind == "message" else (content if isinstance(content, str) else "")
        new_leaf = entry.get("parentId")
    old_leaf = agent.session.leaf_id
    before = SessionBeforeTreeEvent(
        target_id, old_leaf, new_leaf, summarize, custom_instructions, replace_instructions, label or None
    )
    if await _cancelled(rt, "session_before_tree", before):
        return TreeMove(cancelled=True)
    summary = None
    if summarize:
        abandoned = abandoned_path(agent.active, old_leaf, new_leaf)
        try:
            summary = await summarize_entries(agent.active, abandoned, custom_instructions, replace_instructions)
        except RuntimeError as exc:
            raise HostError(str(exc)) from None
    agent.session.set_leaf(new_leaf)
    summary_entry = None
    if summary and summary[0]:
        fields: dict[str, Any] = {"fromId": new_leaf or "root", "summary": summary[0]}
        if summary[1]:
            fields["usage"] = summary[1]
        summary_entry = agent.session.append("branch_summary", **fields)
    if label:
        agent.set_label(target_id, label)
    agent.rebuild_context(restore_model=False)
    await rt.hooks.acall("session_tree", event=SessionTreeEvent(target_id, old_leaf, new_leaf, summary_entry))
    return TreeMove(cancelled=False, editor_text=editor_text, summary_entry=summary_entry)
