"""start_pending_recovery: finish what an earlier process left unfinished in this session.

1. The ``session_recover`` hooks restore background work (the workflows plugin resumes the runs
   this session owns from their last completed step, and appends the results of finished runs
   that never reached the session: ``completions``) and add notices.
2. Interrupted tool calls (an assistant toolUse whose results never arrived) get an error result
   appended, so the model sees they did not run (``dropped``).
3. Queued messages that were acknowledged but never delivered nor cleared (the queue journal of
   ``engine/queues.py``) are queued again under their journal ids and delivered in one turn that
   streams like any other (``replayed``); while a run streams, that run delivers them.

The report is computed once per loaded session and repeated verbatim afterwards; a second call
while the first is still working waits for it (:class:`Recovery` owns both).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from atomic_host.contract.errors import HostError
from atomic_host.contract.events import SessionRecoverEvent
from atomic_host.engine.queues import pending_deliveries

if TYPE_CHECKING:
    from atomic_host.engine.active import ActiveSession
    from atomic_host.engine.runner import Runner

INTERRUPTED = "Tool execution was interrupted: the result is unavailable."


class Recovery:
    """``start_pending_recovery`` for one loaded session: its report, computed once."""

    def __init__(self, active: ActiveSession, runner: Runner) -> None:
        self._active = active
        self._runner = runner
        self.report: dict[str, Any] | None = None
        self._task: asyncio.Future[dict[str, Any]] | None = None

    async def recover(self, reason: str | None = None) -> dict[str, Any]:
        if self.report is not None:
            return self.report
        if self._task is None:
            self._task = asyncio.ensure_future(self._recover(reason or "resume"))
        return await asyncio.shield(self._task)

    async def _recover(self, reason: str) -> dict[str, Any]:
        self.report = await _recover(self._active, self._runner, reason)
        return self.report


async def _recover(agent: ActiveSession, runner: Runner, reason: str) -> dict[str, Any]:
    report: dict[str, Any] = {"replayed": 0, "dropped": 0, "completions": 0, "notices": []}
    hooks = agent.hooks
    if hooks.has_impls("session_recover"):
        event = SessionRecoverEvent(reason, agent.session.id, agent.session.location)
        for res in await hooks.acall("session_recover", event=event):  # RecoverResults only
            report["notices"] += [str(n) for n in res.notices]
            report["completions"] += int(res.completions)
            if res.resumed:
                report["resumed"] = report.get("resumed", 0) + int(res.resumed)
    branch = agent.session.branch()
    last_assistant = None
    answered: set[str] = set()
    for entry in branch:
        m = entry.get("message") or {}
        if entry.get("type") != "message":
            continue
        if m.get("role") == "assistant":
            last_assistant, answered = m, set()
        elif m.get("role") == "toolResult":
            answered.add(m.get("toolCallId", ""))
    if last_assistant is not None and last_assistant.get("stopReason") == "toolUse" and not runner.is_streaming:
        for block in last_assistant.get("content") or []:
            if block.get("type") == "toolCall" and block.get("id") not in answered:
                result = {
                    "role": "toolResult",
                    "toolCallId": block["id"],
                    "toolName": block.get("name", ""),
                    "content": [{"type": "text", "text": INTERRUPTED}],
                    "isError": True,
                    "timestamp": int(time.time() * 1000),
                }
                agent.record_message(result)
                report["dropped"] += 1
        if report["dropped"]:
            report["notices"].append(f"{report['dropped']} interrupted tool call(s) were marked as failed.")
    await _replay(agent, runner, report)
    return report


async def _replay(agent: ActiveSession, runner: Runner, report: dict[str, Any]) -> None:
    """Deliver the queued messages a process that is gone acknowledged and never delivered."""
    # Reading the journal walks every entry of the session: off the event loop, on a snapshot
    # (entries are never changed once appended).
    entries, session_id = list(agent.session.entries), agent.session.id
    pending = await asyncio.to_thread(pending_deliveries, entries, session_id)
    live = runner.queues.journal_ids()  # after the wait: what this process has queued meanwhile
    pending = [p for p in pending if p.journal_id not in live]
    if not pending:
        return
    if not runner.is_streaming:
        try:
            agent.require_model()
        except HostError as exc:  # they stay pending in the session for a later recovery
            report["notices"].append(f"{len(pending)} queued message(s) were not replayed: {exc}")
            return
    messages = runner.queues.restore(pending)
    report["replayed"] = len(messages)
    if not runner.is_streaming:
        # all in the turn's first model call; they stay listed until delivered, so no first poll
        runner.start_drive(messages, None, poll_steering_first=False)
