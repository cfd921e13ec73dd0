"""AgentSession: one open session and the agent working in it, as the frontends see it.

A facade over the parts, each owning its state:

- :class:`~atomic_host.engine.active.ActiveSession` (``active``): the session tree, the context,
  the model state (``engine/model_state.py``), what is recorded;
- :class:`~atomic_host.engine.runner.Runner` (``runner``): runs, abort, retry and fallback, the
  queues, the compaction driver (``runner.compactor``);
- :class:`~atomic_host.engine.prompting.Prompter` (``prompter``): the prompt pipeline;
- :class:`~atomic_host.engine.summaries.Summarizer` and
  :class:`~atomic_host.engine.recovery.Recovery`: the background summary, ``start_pending_recovery``.

References go one way (facade → parts → the active session), so a switched-away session is freed
by reference counting alone.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from atomic_host.engine.active import ActiveSession, now_ms
from atomic_host.engine.prompting import Prompter
from atomic_host.engine.recovery import Recovery
from atomic_host.engine.runner import Runner
from atomic_host.engine.summaries import Summarizer

if TYPE_CHECKING:
    from atomic_host.engine.emitter import Emitter
    from atomic_host.engine.queues import MessageQueues
    from atomic_host.engine.services import HostServices
    from atomic_host.kit.sessions.tree import Session


class AgentSession:
    """The active session plus the agent's state; the frontends call into it."""

    def __init__(self, rt: HostServices, session: Session, emit: Emitter | None = None) -> None:
        self.rt = rt
        self.active = ActiveSession(rt, session, emit)
        self.summarizer = Summarizer(self.active)
        self.runner = Runner(rt, self.active, self.summarizer)
        self.prompter = Prompter(rt, self.active, self.runner, self.summarizer)
        self.recovery = Recovery(self.active, self.runner)
        # what the frontends call most, bound once
        self.emit = self.active.emit
        self.prompt = self.prompter.prompt
        self.queue_message = self.prompter.queue_message
        self.submit_extension_prompt = self.prompter.submit_extension_prompt
        self.abort = self.runner.abort
        self.abort_retry = self.runner.abort_retry
        self.wait_idle = self.runner.wait_idle
        self.start_drive = self.runner.start_drive
        self.add_bash_message = self.runner.add_bash_message
        self.set_model = self.active.state.set_model
        self.cycle_model = self.active.state.cycle_model
        self.set_thinking_level = self.active.state.set_thinking_level
        self.cycle_thinking_level = self.active.state.cycle_thinking_level
        self.scoped_models = self.active.state.scoped
        self.set_session_name = self.active.set_session_name
        self.set_label = self.active.set_label
        self.append_custom_entry = self.active.append_custom_entry
        self.require_model = self.active.require_model
        self.rebuild_context = self.active.rebuild_context
        self.fire_session_start = self.active.fire_session_start
        self.temp_dir = self.active.temp_dir

    @classmethod
    async def open_initial(cls, rt: HostServices) -> AgentSession:
        """Startup: --session / --continue / --no-session / a new session, then model selection."""
        opts = rt.options
        # Opening the store may import a driver and connect to a server (postgres: psycopg, a round
        # trip or two): in a thread too.
        store = await asyncio.to_thread(lambda: rt.store)
        session = None
        # Reading and parsing a long session file takes a while (a 20,000-turn one: ~0.3 s of CPU):
        # in a thread, like every other store call, so the watchdog and the stdin reader keep going.
        if opts.session:
            session = await asyncio.to_thread(open_session_ref, store, opts.session)
        elif opts.continue_session:
            session = await asyncio.to_thread(store.most_recent, rt.cwd)
        fresh = session is None
        if fresh:
            session = store.new_session(rt.cwd)
        agent = cls(rt, session)
        agent.active.rebuild_context(restore_model=not fresh)
        agent.active.state.select_startup(fresh)
        rt.session = agent  # active before session_info_changed/session_start: hooks may use api.session_id, …
        if opts.name:
            agent.set_session_name(opts.name)
        await agent.fire_session_start("startup")
        return agent

    # --- state the frontends read (and navigation carries over to the next session) ---

    @property
    def session(self) -> Session:
        return self.active.session

    @property
    def cwd(self) -> str:
        return self.active.cwd

    @cwd.setter
    def cwd(self, value: str) -> None:
        self.active.cwd = value

    @property
    def model(self) -> dict[str, Any] | None:
        return self.active.model

    @model.setter
    def model(self, value: dict[str, Any] | None) -> None:
        self.active.model = value

    @property
    def thinking_level(self) -> str:
        return self.active.thinking_level

    @thinking_level.setter
    def thinking_level(self, value: str) -> None:
        self.active.thinking_level = value

    @property
    def model_fallback_message(self) -> str | None:
        return self.active.state.fallback_message

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.active.messages

    @property
    def message_count(self) -> int:
        return self.active.message_count

    @property
    def queues(self) -> MessageQueues:
        return self.runner.queues

    @property
    def is_streaming(self) -> bool:
        return self.runner.is_streaming

    @property
    def is_compacting(self) -> bool:
        compactor = self.runner._compactor
        return compactor is not None and compactor.running

    @property
    def compaction_reason(self) -> str | None:
        """The running compaction's reason (manual, threshold, overflow), None when none runs."""
        compactor = self.runner._compactor
        return compactor.reason if compactor is not None else None

    def send_custom_message(
        self,
        messages: list[dict[str, Any]],
        *,
        trigger_turn: bool,
        deliver_as: str | None,
    ) -> asyncio.Future[None]:
        """``api.send_message`` / ``send_messages``: the messages (:func:`custom_message` each),
        then :meth:`Runner.send_custom_message` delivers them together."""
        return self.runner.send_custom_message(messages, trigger_turn=trigger_turn, deliver_as=deliver_as)  # type: ignore[no-any-return]

    async def close(self, reason: str) -> None:
        """Stop the run and tell plugins this session is going away."""
        from atomic_host.contract.events import SessionShutdownEvent

        self.summarizer.cancel()
        if self.is_streaming:
            await self.abort()
        await self.rt.hooks.acall("session_shutdown", event=SessionShutdownEvent(reason))


def open_session_ref(store: Any, ref: str) -> Session:
    """``--session``: a file path, or a session id in the current store."""
    import os

    if os.sep in ref or ref.endswith(".jsonl"):
        return store.open_path(os.path.abspath(os.path.expanduser(ref)))
    return store.open(ref)


def custom_message(
    custom_type: str, content: Any, *, display: bool = True, details: Any = None, exclude_from_context: bool = False
) -> dict[str, Any]:
    """A custom message (role ``custom``) as ``api.send_message`` sends it."""
    if not isinstance(custom_type, str) or not custom_type:
        raise ValueError("a custom message needs a custom_type")
    message = {"role": "custom", "customType": custom_type, "content": content, "display": display}
    message["timestamp"] = now_ms()
    if details is not None:
        message["details"] = details
    if exclude_from_context:
        message["excludeFromContext"] = True
    return message
