"""The runs of a session: the drive task, abort, retry and fallback, the queues and what they continue.

:class:`Runner` starts a run (``start_drive``) and drives it: the agent loop
(:func:`atomic_host.agent.loop.run_agent`, for which it implements
:class:`~atomic_host.agent.ports.RunPorts`), then after each run overflow recovery and threshold
compaction (``engine/compaction.py``), auto-retry and fallback (``engine/retry.py``) and the queued
messages that continue it (``engine/queues.py``). It owns the abort signal and the run state; the
session, its context and its model are the :class:`~atomic_host.engine.active.ActiveSession`'s.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from atomic_host.contract.tools import ToolContext
from atomic_host.engine.queues import MessageQueues
from atomic_host.engine.retry import RetryAndFallback
from atomic_host.kit.log import log

if TYPE_CHECKING:
    from collections.abc import Callable

    from atomic_host.agent.ports import StreamFn
    from atomic_host.contract.providers import StreamOptions
    from atomic_host.contract.tools import Tool, ToolResult
    from atomic_host.engine.active import ActiveSession
    from atomic_host.engine.compaction import Compactor
    from atomic_host.engine.services import HostServices
    from atomic_host.engine.summaries import Summarizer
    from atomic_host.kit.sessions.tree import Session
    from atomic_host.plugins.dispatch import Dispatcher
    from atomic_host.plugins.registry import ToolRegistry

DELIVERIES = frozenset({None, "steer", "followUp", "nextTurn", "interrupt"})
ABORT_GRACE_S = 1.0
"""How long abort lets a provider stream end on its own before cancelling it."""


class Runner:
    """The runs of one session (module docstring)."""

    def __init__(self, rt: HostServices, active: ActiveSession, summarizer: Summarizer) -> None:
        self._rt = rt
        self.active = active
        self._summarizer = summarizer
        self.emit = active.emit
        self.queues = MessageQueues(
            active.session, self.emit_queue, rt.settings.steering_mode, rt.settings.follow_up_mode
        )
        """The steering and follow-up queues and their journal (engine/queues.py)."""
        self.retry = RetryAndFallback(active)
        """Auto-retry and fallback models after a failed run (engine/retry.py)."""
        self.next_turn: list[dict[str, Any]] = []
        """Custom messages sent with ``deliverAs: "nextTurn"``: they ride with the next prompt."""
        self.deferred_bash: list[dict[str, Any]] = []
        self.abort_signal = asyncio.Event()  # each run gets its own (start_drive)
        self.drive_task: asyncio.Task[None] | None = None
        self.in_provider_stream = False
        self.cancelled_for_abort = False
        self.aborts = 0
        """How many times ``abort`` was asked (an interrupt checks none came in meanwhile)."""

        self._compactor: Compactor | None = None

    @property
    def compactor(self) -> Compactor:
        """The compaction driver, made on first use: its module loads with the first run, not at startup."""
        if self._compactor is None:
            # lazy: the compaction driver loads with the first run, not at startup (tests/perf/startup_imports)
            from atomic_host.engine.compaction import Compactor

            self._compactor = Compactor(self.active)
        return self._compactor

    @property
    def is_streaming(self) -> bool:
        return self.drive_task is not None and not self.drive_task.done()

    # --- RunPorts: what the agent loop uses ---

    @property
    def session(self) -> Session:
        return self.active.session

    @property
    def model(self) -> dict[str, Any] | None:
        return self.active.model

    @property
    def tools(self) -> ToolRegistry:
        return self._rt.tools

    @property
    def hooks(self) -> Dispatcher:
        return self._rt.hooks

    def record_message(self, message: dict[str, Any]) -> None:
        self.active.record_message(message)

    def end_message(self, message: dict[str, Any]) -> dict[str, Any]:
        return self.active.end_message(message)

    async def deliver_message(self, message: dict[str, Any]) -> dict[str, Any]:
        """A user/custom message enters the run: persistence, events, dequeue. Saved first (the
        write durable: :meth:`saved`), so a message the session could not store is never shown as
        delivered. Returns the message as saved (``message_end`` hooks may have replaced it)."""
        final = self.active.end_message(message)
        self.active.record_message(final)
        await self.saved()
        self._delivered(message, final)
        return final

    def _delivered(self, message: dict[str, Any], final: dict[str, Any]) -> None:
        self.emit({"type": "message_start", "message": message})
        self.queues.take(message)
        self.emit({"type": "message_end", "message": final})

    async def saved(self) -> None:
        """The flush barrier of a run: every entry appended so far is stored (at once for a file
        store). An abort stops the wait, so abort answers at once; a failed write raises."""
        await self.active.session.settled(abort=self.abort_signal)

    def note_assistant(self, message: dict[str, Any]) -> None:
        self.retry.answered(message)
        if self._compactor is not None:
            self._compactor.answered(message)

    async def prepare_next_call(self) -> bool:
        return await self.compactor.mid_turn()

    def poll_steering(self) -> list[dict[str, Any]]:
        return self.queues.poll_steering()

    def poll_follow_up(self) -> list[dict[str, Any]]:
        return self.queues.poll_follow_up()

    async def llm_context(self, system_prompt: str | None) -> dict[str, Any]:
        return await self.active.llm_context(system_prompt, self.abort_signal)

    def stream_options(self) -> StreamOptions:
        return self.active.stream_options(self.abort_signal)

    def stream_fn(self, api: str) -> StreamFn | None:
        return self.active.stream_fn(api)

    def model_tools(self) -> list[Tool]:
        return self.active.model_tools()

    def temp_dir(self) -> str | None:
        return self.active.temp_dir()

    def tool_context(
        self,
        tool: Tool,
        call_id: str,
        signal: asyncio.Event,
        on_update: Callable[[ToolResult], None],
        call_tool: Callable[[str, dict[str, Any]], Any],
    ) -> ToolContext:
        rt = self._rt
        return ToolContext(
            cwd=self.active.cwd,
            session_id=self.active.session.id,
            tool_call_id=call_id,
            signal=signal,
            on_update=on_update,
            ui=rt.ui,
            temp_dir=self.active.temp_dir,
            artifact_dirs=self.active.artifact_dirs,
            call_tool=call_tool,
            list_tools=rt.tools.callable_from_code,
            deferred_tools=rt.tools.deferred,
            load_tools=rt.tools.load,
            settings=rt.settings.data,
            state=rt.tool_state.setdefault(tool.plugin, {}),
        )

    # --- runs ---

    def start_drive(
        self, messages: list[dict[str, Any]], system_prompt: str | None, poll_steering_first: bool = True
    ) -> None:
        """Start a run with ``messages``. ``poll_steering_first=False`` when they were just taken
        from the steering queue (they stay listed until delivered, so a first poll would repeat them)."""
        if self._rt.pending_reload:
            self._rt.apply_pending_reloads()
        # Imported here, with the first run (the other modules of a run load then too): not on startup's path.
        from atomic_host.kit.llm.abort import AbortSignal

        self.abort_signal = AbortSignal()  # a provider stream watches it without a task (kit/llm/abort.py)
        if self._compactor is not None:
            self._compactor.new_turn()  # a new turn may recover from an overflow once, compact mid-turn again
        self.drive_task = asyncio.create_task(self._drive(messages, system_prompt, poll_steering_first))

    async def _drive(
        self, messages: list[dict[str, Any]], system_prompt: str | None, poll_steering_first: bool
    ) -> None:
        # lazy: the agent loop loads with the first prompt (or the warm-up thread), not at startup
        from atomic_host.agent.loop import run_agent

        try:
            while True:
                await run_agent(self, messages, system_prompt, poll_steering_first)
                messages, poll_steering_first = [], True
                if self.abort_signal.is_set():
                    break
                if not self.compactor.stuck and await self.compactor.after_run(self.abort_signal):
                    continue  # overflow compacted: the same turn again
                if self.compactor.stuck:
                    # compacted, still too long (agent_continue_error): stop like an abort, the queue waits
                    self.queues.held = True
                    break
                last = next((m for m in reversed(self.active.messages) if m.get("role") == "assistant"), None)
                if (
                    last is not None
                    and last.get("stopReason") == "error"
                    and (await self.retry.wait_and_retry(last) or self.retry.fall_back(last))
                ):
                    continue  # the same turn again, after the retry delay or with the next fallback model
                if self.abort_signal.is_set():  # abort during the retry delay: the queue stays held
                    break
                await asyncio.sleep(0)  # between runs too: a run that never suspended must not starve the reader
                if self._rt.pending_reload:
                    self._rt.apply_pending_reloads()
                messages, poll_steering_first = self.queues.next_queued(), False
                if not messages:
                    break
        except OSError as exc:  # the session could not be written (disk full, locked elsewhere): say so
            log.warning(f"could not save the session: {exc}")
            # a write that failed behind the run took back the entries from it on: so does the context
            self.active.rebuild_context(restore_model=False)
            self._report_unsaved(exc)
        except Exception as exc:  # a bug in the loop must not kill the host
            log.warning(f"agent run failed: {type(exc).__name__}: {exc}")
            self.emit({"type": "agent_end", "messages": []})
        finally:
            # Settled: from here on the session is idle, also for plugins that react to agent_settled
            # (a send_message from on_event then appends or starts a new run instead of queueing).
            if self.drive_task is asyncio.current_task():
                self.drive_task = None
            self.emit({"type": "agent_settled"})
            if not self.abort_signal.is_set() and self.drive_task is None:
                self._summarizer.schedule(lambda: self.is_streaming)

    def _report_unsaved(self, exc: BaseException) -> None:
        """End a run whose session write failed with an error assistant message the client can
        show (like a provider error). It is not saved or added to the context: it could not be."""
        # lazy: the LLM helpers (kit.llm) only for a failed session write; startup does not load them
        from atomic_host.kit.llm.complete import failed

        message = failed(f"Could not save the session: {exc}", self.active.model or {})
        self.emit({"type": "message_start", "message": message})
        self.emit({"type": "message_end", "message": message})
        self.emit({"type": "agent_end", "messages": [message]})

    def abort_retry(self) -> None:
        self.retry.cancel_wait()

    def abort_compaction(self) -> None:
        """RPC ``abort_compaction``: cancel the running compaction (a no-op when none runs)."""
        if self._compactor is not None:
            self._compactor.abort()

    def signal_abort(self) -> None:
        """Ask the running run to stop: retry delay, provider stream, tools, automatic compaction.
        The queues are kept and held: nothing queued runs until the next prompt (semantics §3.4)."""
        self.abort_signal.set()
        self.abort_retry()
        if self._compactor is not None:
            self._compactor.cancel_automatic()  # a threshold/overflow compaction inside this run
        if self.is_streaming:
            self.queues.held = True

    async def abort(self) -> None:
        """Cancel the retry delay, the stream and running tools; wait until idle; keep the queues."""
        self.aborts += 1
        task = self.drive_task
        self.signal_abort()
        if task is None or task.done():
            return  # nothing running: a no-op
        done, _ = await asyncio.wait({task}, timeout=ABORT_GRACE_S)
        if not done and self.in_provider_stream:
            # A provider stream that ignores the abort signal: cancel it (stream_assistant turns
            # the cancellation into the aborted assistant message and the run ends normally).
            log.warning("provider stream ignored abort; cancelling it")
            self.cancelled_for_abort = True
            task.cancel()
        await asyncio.shield(task)

    async def wait_idle(self) -> None:
        while self.drive_task is not None and not self.drive_task.done():
            await asyncio.shield(self.drive_task)

    # --- queued messages and what continues a run ---

    def emit_queue(self) -> None:
        self.emit({"type": "queue_update", "steering": self.queues.steering, "followUp": self.queues.follow_up})

    def enqueue(self, kind: str, message: dict[str, Any], text: str | None) -> None:
        """Queue a message (``kind``: steer or followUp); ``text`` is what ``queue_update`` lists
        (None: not listed, as custom messages)."""
        self.queues.enqueue(kind, message, text)

    def continue_queued(self) -> None:
        """Idle with something queued, not held or paused: a run delivers it."""
        if not self.is_streaming and self.active.messages and not self.queues.held and not self.queues.paused:
            self.start_drive(self.queues.next_queued(), None, poll_steering_first=False)

    def send_custom_message(
        self, messages: list[dict[str, Any]], *, trigger_turn: bool, deliver_as: str | None
    ) -> Any:
        """``api.send_message`` / ``api.send_messages`` (semantics §5.3 sendMessage), for one or
        several messages admitted together, in order. Acts at once, so synchronous hooks
        (``on_event``) can call it; the returned future is done, except for an ``interrupt`` of a
        running run, where it resolves once the aborted run has ended and the new one started.

        - ``nextTurn``: held, and delivered after the user message of the next prompt;
        - ``interrupt``: abort the running run (the queues are kept and held), then run with them;
        - streaming: queued, as steering unless ``deliver_as == "followUp"``;
        - idle with ``trigger_turn``: one run starts with them;
        - idle otherwise: appended (message_start/end, persisted as ``custom_message``).
        """
        if deliver_as not in DELIVERIES:
            raise ValueError(f"deliver_as must be one of {', '.join(sorted(DELIVERIES - {None}))}, got {deliver_as!r}")
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        if deliver_as == "nextTurn":
            self.next_turn.extend(messages)
        elif deliver_as == "interrupt":
            self.active.require_model()
            if self.is_streaming:
                return asyncio.ensure_future(self._interrupt(messages))
            self.start_drive(messages, None)
        elif self.is_streaming:
            for message in messages:
                self.enqueue("followUp" if deliver_as == "followUp" else "steer", message, None)
        elif trigger_turn:
            self.active.require_model()
            self.start_drive(messages, None)
        else:
            # idle: appended and shown at once (the command that sent them, if any, waits for the
            # writes before its response)
            for message in messages:
                final = self.active.end_message(message)
                self.active.record_message(final)
                self._delivered(message, final)
        return done

    async def _interrupt(self, messages: list[dict[str, Any]]) -> None:
        """Stop the running run like ``abort`` does, then start one that delivers ``messages``."""
        aborts = self.aborts
        task = self.drive_task
        self.signal_abort()
        if task is not None:
            await asyncio.shield(task)
        if self._rt.session is None or self._rt.session.runner is not self:
            return  # the session was replaced meanwhile
        if self.aborts != aborts or self.is_streaming:
            # A client abort (or another run) came in between: keep the messages queued, not lost.
            for message in messages:
                self.enqueue("steer", message, None)
            return
        self.start_drive(messages, None)

    def add_bash_message(self, message: dict[str, Any]) -> None:
        """Record a direct-bash result: now when idle, at the next prompt while streaming. No event."""
        if self.is_streaming:
            self.deferred_bash.append(message)
        else:
            self.active.messages.append(message)
            self.active.session.append_message(message)

    def flush_deferred_bash(self) -> None:
        for message in self.deferred_bash:
            self.active.messages.append(message)
            self.active.session.append_message(message)
        self.deferred_bash.clear()
