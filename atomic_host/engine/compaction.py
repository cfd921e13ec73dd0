"""The host side of compaction (semantics §4.5–4.6): jobs, events, the backup, the entry, the triggers.

The strategy is the ``compact`` hook (the built-in verbatim-lines one is its ``trylast`` default,
``builtin_plugins.compaction``): this driver builds its event — the branch, the context estimate, the
models it may ask (with the session's retry settings and ``summarization_retry_*`` events) and the
``session_before_compact`` consultation — and writes the boundary the winning result describes. One
compaction runs at a time, as its own task (the :class:`Compactor`'s ``job``): manual requests join
it, ``abort_compaction`` cancels it. It works on :class:`~atomic_host.engine.ports.CompactionPorts`.
"""

from __future__ import annotations

import asyncio
import errno
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_host.contract.errors import HostError
from atomic_host.contract.events import CompactEvent, Requester, SessionBeforeCompactEvent, SessionCompactEvent
from atomic_host.contract.records import record
from atomic_host.contract.results import Cancel, Compaction, CompactResult, Failure
from atomic_host.engine.model_choice import fallback_target
from atomic_host.engine.retry import summarization_request
from atomic_host.kit import secrets
from atomic_host.kit.compaction import stats, wire_parameters
from atomic_host.kit.fsio import atomic_write
from atomic_host.kit.llm.complete import complete
from atomic_host.kit.llm.errors import is_context_overflow, is_length_overflow
from atomic_host.kit.log import log
from atomic_host.kit.messages import VERBATIM_STRATEGY
from atomic_host.kit.sessions.jsonl import encode_line
from atomic_host.session.stats import context_estimate, usage_tokens

if TYPE_CHECKING:
    from atomic_host.engine.ports import CompactionPorts, RunControl

TOO_SMALL = "Nothing to compact (session too small)"
NO_STRATEGY = (
    "No compaction strategy: no plugin implements the compact hook "
    "(the built-in builtin_plugins.compaction is in disabledPlugins?)"
)
NO_RESULT = "the compaction strategy gave no result (see extension_error)"
CANCELLED = "Compaction cancelled"
MID_TURN_FAILURE = "Post-tool context compaction failed before the next provider request: "
UNRESOLVED_OVERFLOW = (
    "Context overflow recovery failed after one compact-and-retry attempt. "
    "The conversation is still too long for the model's context window."
)
FAILURE_PREFIX = {
    "manual": "Compaction failed: ",
    "threshold": "Auto-compaction failed: ",
    "overflow": "Context overflow recovery failed: ",
}
BACKUP_LABEL = {"manual": "compact", "threshold": "auto-compact", "overflow": "overflow-auto-compact"}
DEFAULT_RESERVE_TOKENS = 16384


class _Failed(Exception):
    """Compaction failed with this (unprefixed) message."""


class _TooSmall(Exception):
    """Nothing to compact; the message is the strategy's."""


class _Cancelled(Exception):
    pass


@record
class Outcome:
    """How one compaction ended; ``error`` is the client-facing text (already prefixed), and
    ``answer`` the ``compact`` response's error text when it differs (the bare "too small").
    ``result`` and ``error`` together: the boundary was written, but the context is still over
    the model's window, so the request that should follow it is not sent."""

    reason: str
    result: dict[str, Any] | None = None
    error: str | None = None
    aborted: bool = False
    answer: str | None = None


@record
class Job:
    reason: str
    task: asyncio.Task[Outcome]


# --- the driver ----------------------------------------------------------------------------------


class Compactor:
    """One session's compaction: the running job, and whether the last reply already recovered
    from an overflow (a second overflow in a row is not retried). Triggers: :meth:`before_prompt`,
    :meth:`mid_turn` (after a turn's tool results), :meth:`after_run`; requests: :meth:`manual`,
    :meth:`abort`; a run's abort: :meth:`cancel_automatic`."""

    def __init__(self, agent: CompactionPorts) -> None:
        self.agent = agent
        self.job: Job | None = None
        self.overflow_recovered = False
        self.mid_turn_failed = False
        """A mid-turn compaction of this run failed: the run does not try again after each tool batch."""
        self.stuck = False
        """This run compacted but is still too long to continue (``agent_continue_error`` was sent)."""

    @property
    def running(self) -> bool:
        return self.job is not None and not self.job.task.done()

    def has_strategy(self) -> bool:
        """Whether a plugin implements ``compact`` (automatic compaction is skipped without one)."""
        return self.agent.hooks.has_impls("compact")

    @property
    def reason(self) -> str | None:
        """The running compaction's reason (``get_state.compactionReason``), None when none runs."""
        return self.job.reason if self.running and self.job is not None else None

    def new_turn(self) -> None:
        """A new prompt may recover from an overflow once, and compact mid-turn again."""
        self.overflow_recovered = False
        self.mid_turn_failed = self.stuck = False

    def answered(self, message: dict[str, Any]) -> None:
        """A reply ended: one that is neither an error nor cut off clears the overflow guard, so a
        later overflow in the same tool-heavy run is recovered again (only two in a row are not)."""
        if message.get("stopReason") not in ("error", "length", "aborted"):
            self.overflow_recovered = False

    async def manual(self, run: RunControl) -> dict[str, Any]:
        """RPC ``compact``: abort the run, cancel automatic compaction, join a running manual one."""
        job = self.job
        if job is not None and not job.task.done():
            if job.reason == "manual":
                return _answer(await _joined(job))
            job.task.cancel()
            await asyncio.gather(job.task, return_exceptions=True)
        if not self.has_strategy():
            raise HostError(NO_STRATEGY)
        if run.is_streaming:
            await run.abort()
        self.agent.require_model()
        job = self.job
        if job is None or job.task.done() or job.reason != "manual":  # else another manual request started meanwhile
            job = self.start("manual")
        return _answer(await _joined(job))

    def abort(self) -> None:
        """RPC ``abort_compaction``: cancel the running compaction (a no-op when none runs)."""
        if self.job is not None and not self.job.task.done():
            self.job.task.cancel()

    def cancel_automatic(self) -> None:
        """``abort``: cancel a threshold/overflow compaction of the run (manual ones need ``abort_compaction``)."""
        job = self.job
        if job is not None and job.reason != "manual" and not job.task.done():
            job.task.cancel()

    async def before_prompt(self) -> None:
        """Threshold check before a new prompt (aborted replies included)."""
        last = _last_assistant(self.agent)
        if last is not None and self.has_strategy() and _over_threshold(self.agent, last):
            await self.start("threshold").task

    async def after_run(self, abort_signal: asyncio.Event) -> bool:
        """After a finished (not aborted) run: overflow recovery or threshold compaction.

        True when the run should continue (overflow compacted and the failed reply left the context).
        """
        agent = self.agent
        last = _last_assistant(agent)
        if last is None or last.get("stopReason") == "aborted" or not self.has_strategy():
            return False
        if _is_overflow(agent, last):
            if self.overflow_recovered:
                outcome = Outcome("overflow", error=UNRESOLVED_OVERFLOW)
                _emit_start(agent, "overflow")
                _emit_end(agent, outcome, unresolved=True)
                return False
            self.overflow_recovered = True
            will_retry = last.get("stopReason") != "stop"
            outcome = await self.start("overflow", failed=last, will_retry=will_retry).task
            if outcome.result is None:
                return False
            if last in agent.messages:
                agent.messages.remove(last)
            if outcome.error:  # compacted, but still too long: the retry is not sent
                self._stuck(outcome.error)
                return False
            return will_retry and not abort_signal.is_set()
        if _over_threshold(agent, last):
            await self.start("threshold").task
        return False

    async def mid_turn(self) -> bool:
        """After a turn's tool results, before the run's next model call (semantics §4.6): compact
        when the context (the last reply's usage plus the tool results' estimate) is over the
        threshold. False when the compacted context is still over the model's window: then the next
        request is not sent (``compaction_end`` carries the result and an ``errorMessage``, then
        ``agent_continue_error``). A compaction that fails or is cancelled lets the turn go on as
        it is (the provider says if it is too long; overflow recovery follows)."""
        agent = self.agent
        window = _window(agent)
        if self.mid_turn_failed or self.running or window <= 0 or not agent.auto_compaction:
            return True
        reserve = agent.settings.int("compaction.reserveTokens", DEFAULT_RESERVE_TOKENS)
        if context_estimate(agent.messages) <= window - reserve or not self.has_strategy():
            return True
        outcome = await _joined(self.start("threshold", mid_turn=True))
        if outcome.result is not None and outcome.error:
            self._stuck(outcome.error)
            return False
        if outcome.error:
            self.mid_turn_failed = True
        return True

    def _stuck(self, error: str) -> None:
        """The run cannot continue after a compaction: say so (the run ends, nothing is sent)."""
        self.stuck = True
        self.agent.emit({"type": "agent_continue_error", "source": "post_compaction", "errorMessage": error})

    def start(
        self, reason: str, *, failed: dict[str, Any] | None = None, will_retry: bool = False, mid_turn: bool = False
    ) -> Job:
        """Start one compaction as its own task and remember it as the running job."""
        self.job = Job(reason, asyncio.create_task(_run(self.agent, reason, failed, will_retry, mid_turn)))
        return self.job


async def _joined(job: Job) -> Outcome:
    """The job's outcome; the caller's wait is shielded so one caller leaving does not cancel it.

    A job cancelled before its first step never ran ``_run`` (which turns cancellation into an
    aborted outcome): that is an aborted compaction too, not the caller's own cancellation.
    """
    try:
        return await asyncio.shield(job.task)
    except asyncio.CancelledError:
        me = asyncio.current_task()
        if job.task.cancelled() and not (me is not None and me.cancelling()):
            return Outcome(job.reason, aborted=True)
        raise


# --- triggers ------------------------------------------------------------------------------------


def _last_assistant(agent: CompactionPorts) -> dict[str, Any] | None:
    return next((m for m in reversed(agent.messages) if m.get("role") == "assistant"), None)


def _window(agent: CompactionPorts) -> int:
    return int((agent.model or {}).get("contextWindow") or 0)


def _same_model(agent: CompactionPorts, message: dict[str, Any]) -> bool:
    model = agent.model or {}
    return message.get("provider") == model.get("provider") and message.get("model") == model.get("id")


def _is_overflow(agent: CompactionPorts, last: dict[str, Any]) -> bool:
    """A context-overflow error, or a length stop because the context is full (providers.md §4)."""
    if not _same_model(agent, last):
        return False
    if is_context_overflow(last, _window(agent)):
        return True
    if last.get("stopReason") != "length":
        return False
    end = next((i for i in range(len(agent.messages) - 1, -1, -1) if agent.messages[i] is last), len(agent.messages))
    return is_length_overflow(last, agent.model or {}, context_estimate(agent.messages[:end]))


def _over_threshold(agent: CompactionPorts, last: dict[str, Any]) -> bool:
    window = _window(agent)
    if not agent.auto_compaction or window <= 0:
        return False
    # agent.messages holds only post-boundary messages: any assistant in it is newer than the boundary.
    if last.get("stopReason") in ("error", "aborted"):
        tokens = context_estimate(agent.messages)
    else:
        tokens = usage_tokens(last.get("usage") or {}, last.get("api", ""))
    reserve = agent.settings.int("compaction.reserveTokens", DEFAULT_RESERVE_TOKENS)
    return tokens > window - reserve


# --- one compaction --------------------------------------------------------------------------------


async def _run(
    agent: CompactionPorts, reason: str, failed: dict[str, Any] | None, will_retry: bool, mid_turn: bool = False
) -> Outcome:
    _emit_start(agent, reason, mid_turn)
    prefix = MID_TURN_FAILURE if mid_turn else FAILURE_PREFIX[reason]
    try:
        result = await _compact(agent, reason, failed, mid_turn)
        outcome = Outcome(reason, result=result)
        if mid_turn or will_retry:  # a request follows at once: it must fit the model's window
            outcome.error = _still_too_long(agent, failed)
    except asyncio.CancelledError:
        outcome = Outcome(reason, aborted=True)
    except _Cancelled:
        outcome = Outcome(reason, aborted=True, error=CANCELLED if reason == "manual" else None)
    except _TooSmall as exc:
        # automatic: a quiet no-op (null result, no error); the built-in never says it for overflow
        message = str(exc) or TOO_SMALL
        manual = reason == "manual"
        outcome = Outcome(reason, error=FAILURE_PREFIX[reason] + message if manual else None, answer=message)
    except _Failed as exc:
        outcome = Outcome(reason, error=prefix + str(exc))
    except Exception as exc:  # a bug must end with compaction_end, not a hung client
        outcome = Outcome(reason, error=prefix + (str(exc) or type(exc).__name__))
    retrying = will_retry and outcome.result is not None and not outcome.error
    _emit_end(agent, outcome, will_retry=retrying, mid_turn=mid_turn)
    return outcome


def _still_too_long(agent: CompactionPorts, failed: dict[str, Any] | None) -> str | None:
    """Why the compacted context cannot be sent (the estimate is over the model's window), or None.
    ``failed``: the overflowed reply, which leaves the context before the retry."""
    context = [m for m in agent.messages if failed is None or m != failed]
    tokens, window = context_estimate(context), _window(agent)
    if window <= 0 or tokens <= window:
        return None
    return (
        f"The context remains over the model's input limit after compaction ({tokens} > {window} tokens); "
        "the next provider request was not sent."
    )


def _answer(outcome: Outcome) -> dict[str, Any]:
    if outcome.result is not None:
        return outcome.result
    if outcome.aborted:
        raise HostError(CANCELLED)
    raise HostError(outcome.answer or outcome.error or TOO_SMALL)


def _emit_start(agent: CompactionPorts, reason: str, mid_turn: bool = False) -> None:
    event: dict[str, Any] = {"type": "compaction_start", "reason": reason}
    if mid_turn:
        event["midTurn"] = True
    agent.emit(event)


def _emit_end(
    agent: CompactionPorts,
    outcome: Outcome,
    *,
    will_retry: bool = False,
    unresolved: bool = False,
    mid_turn: bool = False,
) -> None:
    event: dict[str, Any] = {
        "type": "compaction_end",
        "reason": outcome.reason,
        "result": outcome.result,
        "aborted": outcome.aborted,
        "willRetry": will_retry,
    }
    if outcome.error and not outcome.aborted:
        event["errorMessage"] = outcome.error
    if unresolved:
        event["unresolvedOverflow"] = True
    if mid_turn:
        event["midTurn"] = True
    agent.emit(event)


async def _compact(
    agent: CompactionPorts, reason: str, failed: dict[str, Any] | None, mid_turn: bool = False
) -> dict[str, Any]:
    hooks = agent.hooks
    branch = agent.session.branch()
    if failed is not None:  # the overflowed reply leaves the context: do not keep it in the tail
        branch = [e for e in branch if e.get("message") is not failed]
    context = [m for m in agent.messages if m is not failed]
    tokens_before = context_estimate(context)
    consulted = False

    async def before_compact(
        *,
        lines: list[str] | tuple[str, ...] = (),
        protected: set[int] | list[int] | tuple[int, ...] = (),
        first_kept_entry_id: str | None = None,
        parameters: dict[str, Any] | None = None,
    ) -> Cancel | CompactResult | None:
        nonlocal consulted
        consulted = True
        if not hooks.has_impls("session_before_compact"):
            return None
        event = SessionBeforeCompactEvent(
            reason=reason,
            lines=list(lines),
            protected=sorted(protected),
            first_kept_entry_id=first_kept_entry_id,
            tokens_before=tokens_before,
            parameters=dict(parameters or {}),
            branch_entries=agent.session.branch(),
        )
        decision: Cancel | CompactResult | None = await hooks.acall("session_before_compact", event=event)
        return decision

    requesters = [
        Requester(model, _requester(agent, reason, model, level), level, borrowed)
        for model, level, borrowed in _planner_models(agent)  # the session's, then fallbackModels
    ]
    event = CompactEvent(reason, branch, context, tokens_before, _window(agent), requesters, before_compact, mid_turn)
    answer = await hooks.acall("compact", event=event)
    if isinstance(answer, Cancel):
        raise _Cancelled()
    if isinstance(answer, Failure):
        raise (_TooSmall if answer.nothing_to_do else _Failed)(answer.message)
    if not isinstance(answer, Compaction) or not isinstance(answer.summary, str):
        raise _Failed(NO_RESULT)
    summary, entry_fields = answer.summary, dict(answer.entry or {})
    if not consulted:  # a strategy that did not ask: session_before_compact still decides
        decision = await before_compact(first_kept_entry_id=answer.first_kept_entry_id)
        if isinstance(decision, Cancel):
            raise _Cancelled()
        if isinstance(decision, CompactResult) and decision.compacted_text.strip():
            summary, entry_fields["fromHook"] = decision.compacted_text, True

    first_kept = answer.first_kept_entry_id
    wire: dict[str, Any] = {
        "promptVersion": answer.prompt_version,
        "parameters": answer.parameters or wire_parameters(agent.settings.data),
        "rung": answer.rung,
        "stats": answer.stats or _stats(summary, tokens_before),
    }
    if answer.planner_model:
        wire["plannerModel"] = answer.planner_model
    details: dict[str, Any] = {"strategy": VERBATIM_STRATEGY, **{k: wire[k] for k in _DETAIL_KEYS if k in wire}}
    details.update(answer.details or {})
    if details["strategy"] != VERBATIM_STRATEGY:
        # The boundary kind is the host's: the session format reads an entry back as the context's
        # boundary only with this value. A strategy's own name is kept beside it.
        details["strategyName"] = details["strategy"]
        details["strategy"] = VERBATIM_STRATEGY
    backup = await _write_backup(agent, BACKUP_LABEL[reason])
    if backup:
        details["backupPath"] = backup
    agent.session.append(
        "compaction",
        summary=summary,
        firstKeptEntryId=first_kept,
        tokensBefore=tokens_before,
        details=details,
        **entry_fields,
    )
    agent.rebuild_context(restore_model=False)
    result: dict[str, Any] = {
        "compactedText": summary,
        "firstKeptEntryId": first_kept,
        "tokensBefore": tokens_before,
        **wire,
    }
    if backup:
        result["backupPath"] = backup
    await hooks.acall("session_compact", event=SessionCompactEvent(reason, result))
    return result


_DETAIL_KEYS = ("promptVersion", "rung", "parameters", "stats", "plannerModel")
"""The wire result's fields the entry's ``details`` repeat, in the order Atomic writes them."""


def _stats(summary: str, tokens_before: int) -> dict[str, Any]:
    """Stats for a strategy that reported none: the summary's lines all kept, nothing deleted."""
    lines = len(summary.split("\n")) if summary else 0
    return stats(lines, 0, 0, summary, tokens_before, 0)


def _planner_models(agent: CompactionPorts) -> list[tuple[dict[str, Any], str | None, bool]]:
    """``(model, thinking level or None, borrowed)``: the session's model, then each usable
    ``fallbackModels`` entry once (semantics §4.5; the session's model is never changed)."""
    assert agent.model is not None
    models = [(agent.model, None, False)]
    entries = agent.settings.get("fallbackModels") or []
    for entry in entries if isinstance(entries, list) else []:
        target = fallback_target(agent.registry, entry)
        if target is not None and all(target[0]["id"] != m["id"] or target[0]["provider"] != m["provider"]
                                      for m, _l, _b in models):  # fmt: skip
            models.append((target[0], target[1], True))
    return models


def _requester(agent: CompactionPorts, reason: str, model: dict[str, Any], level: str | None = None) -> Any:
    """One planning request to ``model`` with the session's retry settings and summarization_retry events."""

    async def request(context: dict[str, Any]) -> dict[str, Any]:
        return await summarization_request(
            agent, lambda: _stream_once(agent, model, context, level), "compaction", reason
        )

    return request


async def _stream_once(
    agent: CompactionPorts, model: dict[str, Any], context: dict[str, Any], level: str | None = None
) -> dict[str, Any]:
    stream_fn = agent.registry.stream_fn(model["api"])
    if stream_fn is None:  # an answer, not an exception: the strategy (a plugin) reports it as a failure
        message = f"No API implementation registered for {model['api']}"
        return {"role": "assistant", "content": [], "stopReason": "error", "errorMessage": message}
    options = agent.stream_options()
    if model is not agent.model:  # a borrowed planner: its own credentials, headers and reasoning
        models = agent.registry
        options.api_key = models.resolve_api_key(model["provider"])
        options.headers = models.request_headers(model)
        chosen = level or agent.thinking_level
        options.reasoning = None if chosen == "off" or not model.get("reasoning") else chosen
    options.max_tokens = None
    options.cache_retention = "none"
    import uuid  # not at import: uuid imports platform (~3 ms of startup)

    options.session_id = str(uuid.uuid4())
    options.signal = asyncio.Event()  # cancellation comes from the task; a run abort must not end it

    try:
        return await complete(stream_fn, model, context, options)
    except asyncio.CancelledError:
        options.signal.set()
        raise


async def _write_backup(agent: CompactionPorts, label: str) -> str | None:
    """The full entry list as it is now, as JSONL: ``<sessionFile>.<ISO-with-dashes>.<label>.bak``
    (mode 0600) beside a session file; kept in the store (its writer's ``put_blob``) when the
    session is not a file (postgres); None when it is neither (memory, sqlite) or the write failed.
    Written in a thread from a snapshot taken here."""
    # lazy: datetime only for a backup's file name
    from datetime import UTC, datetime

    session = agent.session
    location, writer = session.location, session.writer
    keep = getattr(writer, "put_blob", None)
    # a location that is no absolute path is no file: never "<location>.<stamp>.bak" in the cwd
    if writer is None or not location or (keep is None and not os.path.isabs(location)):
        return None
    now = datetime.now(UTC)
    name = now.strftime("%Y-%m-%dT%H-%M-%S-") + f"{now.microsecond // 1000:03d}Z.{label}.bak"
    records = [session.header, *session.entries]  # later appends stay out of the backup

    def write() -> str:
        # Masked again: entries of a session written before its credentials were known.
        data = b"".join(encode_line(secrets.mask_obj(r)) for r in records)
        if keep is not None:
            return keep(name, data)

        path = f"{location}.{name}"
        # whole or not at all (a temp file linked into place, never over another file), 0600 like the session
        if not atomic_write(Path(path), data, 0o600, exclusive=True):
            raise FileExistsError(errno.EEXIST, "File exists", path)
        return path

    try:
        return await asyncio.to_thread(write)
    except OSError as exc:
        log.warning(f"could not write the compaction backup of {location}: {exc}")
        return None
