"""The host side of compaction (semantics §4.5–4.6): events, the backup, the entry, the triggers.

The strategy itself (preparation, prompt, parsing, reconstruction) lives in
``builtin_plugins.compaction``. One compaction runs at a time, as its own task
(``agent.compaction_job``): manual requests join it, ``abort_compaction`` cancels it.
"""

from __future__ import annotations

import asyncio
import math
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from atomic_host.engine.model_choice import fallback_target
from atomic_host.kit import secrets

if TYPE_CHECKING:
    from atomic_host.engine.agent_session import AgentSession

TOO_SMALL = "Nothing to compact (session too small)"
CANCELLED = "Compaction cancelled"
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
    pass


class _Cancelled(Exception):
    pass


@dataclass
class Outcome:
    """How one compaction ended; ``error`` is the client-facing text (already prefixed), and
    ``answer`` the ``compact`` response's error text when it differs (the bare "too small")."""

    reason: str
    result: dict[str, Any] | None = None
    error: str | None = None
    aborted: bool = False
    answer: str | None = None


@dataclass
class Job:
    reason: str
    task: asyncio.Task[Outcome]


# --- public entry points -------------------------------------------------------------------------


def is_compacting(agent: AgentSession) -> bool:
    job: Job | None = agent.compaction_job
    return job is not None and not job.task.done()


async def manual_compact(agent: AgentSession) -> dict[str, Any]:
    """RPC ``compact``: abort the run, cancel automatic compaction, join a running manual one."""
    job: Job | None = agent.compaction_job
    if job is not None and not job.task.done():
        if job.reason == "manual":
            return _answer(await _joined(job))
        job.task.cancel()
        await asyncio.gather(job.task, return_exceptions=True)
    if agent.is_streaming:
        await agent.abort()
    agent.require_model()
    job = agent.compaction_job
    if job is None or job.task.done() or job.reason != "manual":  # else another manual request started meanwhile
        job = start(agent, "manual")
    return _answer(await _joined(job))


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


def abort_compaction(agent: AgentSession) -> None:
    """RPC ``abort_compaction``: cancel the running compaction (a no-op when none runs)."""
    job: Job | None = agent.compaction_job
    if job is not None and not job.task.done():
        job.task.cancel()


def cancel_automatic(agent: AgentSession) -> None:
    """``abort``: cancel a threshold/overflow compaction of the run (manual ones need ``abort_compaction``)."""
    job: Job | None = agent.compaction_job
    if job is not None and job.reason != "manual" and not job.task.done():
        job.task.cancel()


async def before_prompt(agent: AgentSession) -> None:
    """Threshold check before a new prompt (aborted replies included)."""
    last = _last_assistant(agent)
    if last is not None and _over_threshold(agent, last):
        await start(agent, "threshold").task


async def after_run(agent: AgentSession) -> bool:
    """After a finished (not aborted) run: overflow recovery or threshold compaction.

    True when the agent should continue (overflow compacted and the failed reply left the context).
    """
    last = _last_assistant(agent)
    if last is None or last.get("stopReason") == "aborted":
        return False
    if _is_overflow(agent, last):
        if agent.overflow_recovered:
            outcome = Outcome("overflow", error=UNRESOLVED_OVERFLOW)
            _emit_start(agent, "overflow")
            _emit_end(agent, outcome, unresolved=True)
            return False
        agent.overflow_recovered = True
        will_retry = last.get("stopReason") != "stop"
        outcome = await start(agent, "overflow", failed=last, will_retry=will_retry).task
        if outcome.result is None:
            return False
        if last in agent.messages:
            agent.messages.remove(last)
        return will_retry and not agent.abort_signal.is_set()
    if _over_threshold(agent, last):
        await start(agent, "threshold").task
    return False


def start(agent: AgentSession, reason: str, *, failed: dict[str, Any] | None = None, will_retry: bool = False) -> Job:
    """Start one compaction as its own task and remember it as the running job."""
    job = Job(reason, asyncio.create_task(_run(agent, reason, failed, will_retry)))
    agent.compaction_job = job
    return job


# --- triggers ------------------------------------------------------------------------------------


def _last_assistant(agent: AgentSession) -> dict[str, Any] | None:
    return next((m for m in reversed(agent.messages) if m.get("role") == "assistant"), None)


def _window(agent: AgentSession) -> int:
    return int((agent.model or {}).get("contextWindow") or 0)


def _same_model(agent: AgentSession, message: dict[str, Any]) -> bool:
    model = agent.model or {}
    return message.get("provider") == model.get("provider") and message.get("model") == model.get("id")


def _is_overflow(agent: AgentSession, last: dict[str, Any]) -> bool:
    """A context-overflow error, or a length stop because the context is full (providers.md §4)."""
    from atomic_host.kit.llm.errors import is_context_overflow, is_length_overflow
    from atomic_host.session.stats import context_estimate

    if not _same_model(agent, last):
        return False
    if is_context_overflow(last, _window(agent)):
        return True
    if last.get("stopReason") != "length":
        return False
    end = next((i for i in range(len(agent.messages) - 1, -1, -1) if agent.messages[i] is last), len(agent.messages))
    return is_length_overflow(last, agent.model or {}, context_estimate(agent.messages[:end]))


def _over_threshold(agent: AgentSession, last: dict[str, Any]) -> bool:
    from atomic_host.session.stats import context_estimate, usage_tokens

    window = _window(agent)
    if not agent.auto_compaction or window <= 0:
        return False
    # agent.messages holds only post-boundary messages: any assistant in it is newer than the boundary.
    if last.get("stopReason") in ("error", "aborted"):
        tokens = context_estimate(agent.messages)
    else:
        tokens = usage_tokens(last.get("usage") or {}, last.get("api", ""))
    reserve = agent.rt.settings.int("compaction.reserveTokens", DEFAULT_RESERVE_TOKENS)
    return tokens > window - reserve


# --- one compaction --------------------------------------------------------------------------------


async def _run(agent: AgentSession, reason: str, failed: dict[str, Any] | None, will_retry: bool) -> Outcome:
    _emit_start(agent, reason)
    try:
        result = await _compact(agent, reason, failed)
        outcome = Outcome(reason, result=result)
    except asyncio.CancelledError:
        outcome = Outcome(reason, aborted=True)
    except _Cancelled:
        outcome = Outcome(reason, aborted=True, error=CANCELLED if reason == "manual" else None)
    except _TooSmall:
        # threshold: a quiet no-op (null result, no error); overflow never gets here
        manual = reason == "manual"
        outcome = Outcome(reason, error=FAILURE_PREFIX[reason] + TOO_SMALL if manual else None, answer=TOO_SMALL)
    except _Failed as exc:
        outcome = Outcome(reason, error=FAILURE_PREFIX[reason] + str(exc))
    except Exception as exc:  # a bug must end with compaction_end, not a hung client
        outcome = Outcome(reason, error=FAILURE_PREFIX[reason] + (str(exc) or type(exc).__name__))
    _emit_end(agent, outcome, will_retry=will_retry and outcome.result is not None)
    return outcome


def _answer(outcome: Outcome) -> dict[str, Any]:
    from atomic_host.contract.errors import HostError as CommandFailed

    if outcome.result is not None:
        return outcome.result
    if outcome.aborted:
        raise CommandFailed(CANCELLED)
    raise CommandFailed(outcome.answer or outcome.error or TOO_SMALL)


def _emit_start(agent: AgentSession, reason: str) -> None:
    agent.emit({"type": "compaction_start", "reason": reason})


def _emit_end(agent: AgentSession, outcome: Outcome, *, will_retry: bool = False, unresolved: bool = False) -> None:
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
    agent.emit(event)


async def _compact(agent: AgentSession, reason: str, failed: dict[str, Any] | None) -> dict[str, Any]:
    from atomic_host.session.context import convert_to_llm, serialize_conversation
    from atomic_host.session.stats import context_estimate
    from builtin_plugins.compaction import PROMPT_VERSION, STRATEGY
    from builtin_plugins.compaction.apply import Reconstruction, reconstruct, stats
    from builtin_plugins.compaction.params import from_settings
    from builtin_plugins.compaction.plan import PlanFailed, fresh, plan
    from builtin_plugins.compaction.prepare import prepare

    settings = agent.rt.settings
    branch = agent.session.branch()
    if failed is not None:  # the overflowed reply leaves the context: do not keep it in the tail
        branch = [e for e in branch if e.get("message") is not failed]
    context = [m for m in agent.messages if m is not failed]
    preserve = from_settings(settings.get, None).preserve_recent
    prep = prepare(branch, preserve, context_estimate(context))
    params = from_settings(settings.get, prep.last_user_text)
    window = _window(agent)
    if not prep.compactable and reason != "overflow":
        raise _TooSmall()

    extra: dict[str, Any] = {}
    extra_details: dict[str, Any] = {}  # plannerModel, when a fallback model planned it
    rung = "planned"
    supplied = await _hook(agent, reason, prep, params)
    if supplied is not None:
        text, rung, range_count, deleted = supplied, "extension", 0, 0
        extra["fromHook"] = True
    else:
        rec = None
        if prep.compactable:
            failure: PlanFailed | None = None
            for model, level, borrowed in _planner_models(agent):  # the session's, then fallbackModels
                try:
                    requester = _requester(agent, reason, model, level)
                    planned = await plan(prep, params.compression_ratio, params.query, window, requester)
                    rec = reconstruct(prep.lines, planned.ranges, prep.protected)
                except PlanFailed as exc:
                    failure = failure or exc  # the session model's failure is the one to report
                    continue
                if borrowed:
                    planner = {"provider": model["provider"], "id": model["id"]}
                    extra_details["plannerModel"] = planner | ({"thinkingLevel": level} if level else {})
                break
            if rec is None and failure is not None and reason != "overflow":
                raise _Failed(str(failure))
        if rec is None:
            rec, rung = fresh(prep), "fresh"
        text, range_count, deleted = rec.text, rec.range_count, rec.lines_deleted

    tail_tokens = math.ceil(len(serialize_conversation(convert_to_llm(prep.tail_messages))) / 4)
    first_kept = prep.first_kept_entry_id
    if rung == "fresh" and window > 0 and tail_tokens > window:
        first_kept, tail_tokens = None, 0
    result_stats = stats(len(prep.lines), Reconstruction(text, deleted, range_count), prep.tokens_before, tail_tokens)
    details: dict[str, Any] = {
        "strategy": STRATEGY,
        "promptVersion": PROMPT_VERSION,
        "rung": rung,
        "parameters": params.to_wire(),
        "stats": result_stats,
        **extra_details,
    }
    backup = _write_backup(agent, BACKUP_LABEL[reason])
    if backup:
        details["backupPath"] = backup
    agent.session.append(
        "compaction",
        summary=text,
        firstKeptEntryId=first_kept,
        tokensBefore=prep.tokens_before,
        details=details,
        **extra,
    )
    agent.rebuild_context(restore_model=False)
    result: dict[str, Any] = {
        "compactedText": text,
        "firstKeptEntryId": first_kept,
        "tokensBefore": prep.tokens_before,
        "promptVersion": PROMPT_VERSION,
        "parameters": params.to_wire(),
        "rung": rung,
        "stats": result_stats,
        **extra_details,
    }
    if backup:
        result["backupPath"] = backup
    from atomic_host.contract.events import SessionCompactEvent

    event = SessionCompactEvent(reason, result)
    await agent.rt.plugins.acall_each("session_compact", event=event, api=agent.rt.api)
    return result


async def _hook(agent: AgentSession, reason: str, prep: Any, params: Any) -> str | None:
    """``session_before_compact``: cancel (raises) or supply the compacted text; None = no opinion."""
    from atomic_host.contract.events import SessionBeforeCompactEvent
    from atomic_host.contract.results import Cancel

    plugins = agent.rt.plugins
    if not plugins.has_impls("session_before_compact"):
        return None
    event = SessionBeforeCompactEvent(
        **{
            "reason": reason,
            "lines": list(prep.lines),
            "protected": sorted(prep.protected),
            "first_kept_entry_id": prep.first_kept_entry_id,
            "tokens_before": prep.tokens_before,
            "parameters": params.to_wire(),
            "branch_entries": agent.session.branch(),
        },
    )
    for _plugin, res in await plugins.acall_each("session_before_compact", event=event, api=agent.rt.api):
        if isinstance(res, Cancel) or (isinstance(res, dict) and res.get("cancel")):
            raise _Cancelled()
        if isinstance(res, dict):
            text = res.get("compacted_text", res.get("compactedText"))
            if isinstance(text, str) and text.strip():
                return text
    return None


def _planner_models(agent: AgentSession) -> list[tuple[dict[str, Any], str | None, bool]]:
    """``(model, thinking level or None, borrowed)``: the session's model, then each usable
    ``fallbackModels`` entry once (semantics §4.5; the session's model is never changed)."""
    assert agent.model is not None
    models = [(agent.model, None, False)]
    entries = agent.rt.settings.get("fallbackModels") or []
    for entry in entries if isinstance(entries, list) else []:
        target = fallback_target(agent.rt.models, entry)
        if target is not None and all(target[0]["id"] != m["id"] or target[0]["provider"] != m["provider"]
                                      for m, _l, _b in models):  # fmt: skip
            models.append((target[0], target[1], True))
    return models


def _requester(agent: AgentSession, reason: str, model: dict[str, Any], level: str | None = None) -> Any:
    """One planning request to ``model`` with the session's retry settings and summarization_retry events."""
    from atomic_host.kit.llm.errors import is_context_overflow, is_retryable_error

    settings = agent.rt.settings

    async def request(context: dict[str, Any]) -> dict[str, Any]:
        attempt = 0
        try:
            while True:
                final = await _stream_once(agent, model, context, level)
                retryable = (
                    final.get("stopReason") == "error"
                    and is_retryable_error(final)
                    and not is_context_overflow(final, _window(agent))
                )
                if not (retryable and agent.auto_retry and attempt < settings.retry_max):
                    return final
                attempt += 1
                delay = settings.retry_base_delay_ms * 2 ** (attempt - 1)
                agent.emit(
                    {
                        "type": "summarization_retry_scheduled",
                        "attempt": attempt,
                        "maxAttempts": settings.retry_max,
                        "delayMs": delay,
                        "errorMessage": final.get("errorMessage", ""),
                    }
                )
                await asyncio.sleep(delay / 1000)
                agent.emit({"type": "summarization_retry_attempt_start", "source": "compaction", "reason": reason})
        finally:
            if attempt:
                agent.emit({"type": "summarization_retry_finished"})

    return request


async def _stream_once(
    agent: AgentSession, model: dict[str, Any], context: dict[str, Any], level: str | None = None
) -> dict[str, Any]:
    stream_fn = agent.rt.models.stream_fn(model["api"])
    if stream_fn is None:
        raise _Failed(f"No API implementation registered for {model['api']}")
    options = agent.stream_options()
    if model is not agent.model:  # a borrowed planner: its own credentials, headers and reasoning
        models = agent.rt.models
        options.api_key = models.resolve_api_key(model["provider"])
        options.headers = models.request_headers(model)
        chosen = level or agent.thinking_level
        options.reasoning = None if chosen == "off" or not model.get("reasoning") else chosen
    options.max_tokens = None
    options.cache_retention = "none"
    options.session_id = str(uuid.uuid4())
    options.signal = asyncio.Event()  # cancellation comes from the task; a run abort must not end it
    from atomic_host.kit.llm.complete import complete

    try:
        return await complete(stream_fn, model, context, options)
    except asyncio.CancelledError:
        options.signal.set()
        raise


def _write_backup(agent: AgentSession, label: str) -> str | None:
    """``<sessionFile>.<ISO-with-dashes>.<label>.bak`` with the full entry list; None without a file."""
    from datetime import UTC, datetime

    session = agent.session
    location = session.location
    if not location or location.startswith("sqlite:") or session.writer is None:
        return None
    now = datetime.now(UTC)
    stamp = now.strftime("%Y-%m-%dT%H-%M-%S-") + f"{now.microsecond // 1000:03d}Z"
    path = f"{location}.{stamp}.{label}.bak"
    from atomic_host.kit.sessions.jsonl import encode_line

    try:
        with open(path, "wb") as fh:
            # Masked again: entries of a session written before its credentials were known.
            fh.write(b"".join(encode_line(secrets.mask_obj(r)) for r in [session.header, *session.entries]))
    except OSError:
        return None
    return path
