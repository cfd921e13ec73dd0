"""What happens after a run ends in a provider error: auto-retry, then model fallback.

:class:`RetryAndFallback` is one session's part of it, owned by its :class:`~atomic_host.engine.runner.Runner`
(semantics §6.3 auto-retry, §6.4 fallback models): the run driver asks :meth:`RetryAndFallback.wait_and_retry`
and then :meth:`RetryAndFallback.fall_back` whether to run again; the agent loop reports every finished
assistant message to :meth:`RetryAndFallback.answered`, which ends a retry or fallback that worked.
It reaches the session only through :class:`~atomic_host.engine.ports.RetryPorts`.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from atomic_host.engine.model_choice import fallback_target

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from atomic_host.core.settings import Settings
    from atomic_host.engine.ports import RetryPorts, SummaryPorts

FALLBACK_CAUSES = frozenset({"auth", "bad_request", "rate_limit", "unavailable", "network"})
"""Failures another model may get past (kit.llm.errors.classify); never aborts, overflow or policy stops."""


def retry_delay_ms(settings: Settings, failed: dict[str, Any], attempt: int) -> int:
    """The one retry policy (session runs and compaction's planning requests): ``retry.baseDelayMs``
    doubled per attempt, or the server's ``retry-after`` when longer, capped by
    ``retry.provider.maxRetryDelayMs`` (``kit.llm.errors.session_retry_delay_ms``)."""
    # lazy: kit.llm.errors is off startup's path (a failed reply loads it)
    from atomic_host.kit.llm.errors import session_retry_delay_ms

    cap_ms = settings.int("retry.provider.maxRetryDelayMs", 60000)
    return session_retry_delay_ms(failed, attempt, settings.retry_base_delay_ms, cap_ms)


async def summarization_request(
    agent: SummaryPorts, once: Callable[[], Awaitable[dict[str, Any]]], source: str, reason: str | None = None
) -> dict[str, Any]:
    """One request of a compaction plan (``source`` "compaction", with its ``reason``) or a branch
    summary ("branchSummary"): ``once()`` sends it and returns the final assistant message. Transient
    failures are retried with the session's policy (``retry.enabled``/``maxRetries``,
    :func:`retry_delay_ms`), reported as ``summarization_retry_scheduled`` /
    ``summarization_retry_attempt_start`` / ``summarization_retry_finished``; the last answer is
    returned, failed or not."""
    # lazy: kit.llm.errors is off startup's path (a failed reply loads it)
    from atomic_host.kit.llm.errors import is_context_overflow, is_retryable_error

    settings = agent.settings
    window = int((agent.model or {}).get("contextWindow") or 0)
    attempt = 0
    try:
        while True:
            final = await once()
            retryable = (
                final.get("stopReason") == "error"
                and is_retryable_error(final)
                and not is_context_overflow(final, window)
            )
            if not (retryable and agent.auto_retry and attempt < settings.retry_max):
                return final
            attempt += 1
            delay = retry_delay_ms(settings, final, attempt)  # retry-after included
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
            start: dict[str, Any] = {"type": "summarization_retry_attempt_start", "source": source}
            if reason is not None:
                start["reason"] = reason
            agent.emit(start)
    finally:
        if attempt:
            agent.emit({"type": "summarization_retry_finished"})


def model_ref(model: dict[str, Any] | None) -> dict[str, Any] | None:
    """``{"provider", "id"}`` of ``model`` (what the events name), None for no model."""
    return None if model is None else {"provider": model.get("provider"), "id": model.get("id")}


class RetryAndFallback:
    """The auto-retry attempt and the fallback walk of one session's current prompt."""

    def __init__(self, agent: RetryPorts) -> None:
        # Held strongly: the runner owns this object, and ``agent`` (the active session) holds
        # neither, so there is no cycle to keep a switched-away session (its whole parsed file)
        # alive until a full collection (60 -> 98 MiB after 8 switches of a 2,000-turn session).
        self.agent = agent
        self.attempt = 0
        """Auto-retry attempts spent on the current failure (0: none running)."""
        self.wait: asyncio.Task[None] | None = None
        """The retry delay being waited out (``abort_retry`` cancels it)."""
        self.fallback_from: tuple[dict[str, Any], str] | None = None
        """The user's model and thinking level while a fallback model answers."""
        self.fallback_index = -1
        """Last entry of the ``fallbackModels`` setting tried in this prompt."""

    def answered(self, message: dict[str, Any]) -> None:
        """An assistant message ended: if it is not a failure, a running retry or fallback worked."""
        if message.get("stopReason") in ("error", "aborted"):
            return
        if self.attempt > 0:
            self.agent.emit({"type": "auto_retry_end", "success": True, "attempt": self.attempt})
            self.attempt = 0
        if self.fallback_index >= 0:
            self.agent.emit({"type": "model_fallback_end", "success": True, "model": model_ref(self.agent.model)})
            self.fallback_index = -1  # this fallback answered: the next failure starts the list again

    async def wait_and_retry(self, failed: dict[str, Any]) -> bool:
        """Wait out the retry delay for ``failed`` and say True (run again), or end the retries
        (``auto_retry_end``) and say False: not retryable, retries off or spent, or cancelled."""
        # lazy: kit.llm.errors is off startup's path (a failed reply loads it)
        from atomic_host.kit.llm.errors import is_context_overflow, is_retryable_error

        agent = self.agent
        window = (agent.model or {}).get("contextWindow", 0)
        retryable = is_retryable_error(failed) and not is_context_overflow(failed, window)
        settings = agent.settings
        if not (retryable and agent.auto_retry and self.attempt < settings.retry_max):
            self._end_retries(failed.get("errorMessage", ""))
            return False
        self.attempt += 1
        delay = retry_delay_ms(settings, failed, self.attempt)
        agent.emit(
            {
                "type": "auto_retry_start",
                "attempt": self.attempt,
                "maxAttempts": settings.retry_max,
                "delayMs": delay,
                "errorMessage": failed.get("errorMessage", ""),
            }
        )
        _drop(agent.messages, failed)
        self.wait = asyncio.create_task(asyncio.sleep(delay / 1000))
        try:
            await self.wait
        except asyncio.CancelledError:
            if asyncio.current_task().cancelling():  # type: ignore[union-attr]
                raise  # the run itself is cancelled, not just the delay
            self._end_retries("Retry cancelled")
            return False
        finally:
            self.wait = None
        return True

    def _end_retries(self, final_error: str) -> None:
        if self.attempt > 0:
            end = {"type": "auto_retry_end", "success": False, "attempt": self.attempt}
            self.agent.emit({**end, "finalError": final_error})
            self.attempt = 0

    def cancel_wait(self) -> None:
        """``abort_retry`` / abort: stop waiting for the retry delay (the retries end)."""
        if self.wait is not None:
            self.wait.cancel()

    def fall_back(self, failed: dict[str, Any]) -> bool:
        """Hand the turn to the next ``fallbackModels`` entry (``provider/model[:level]``) after a
        failure the same model cannot fix: auth, bad request, missing model, or rate limit,
        unavailability or network errors once retries are spent (semantics §6.4). The failed
        reply leaves the context (it stays in the file); the user's model comes back before the
        next prompt (:meth:`restore_user_model`)."""
        # lazy: kit.llm.errors is off startup's path (a failed reply loads it)
        from atomic_host.kit.llm.errors import classify

        agent = self.agent
        entries = agent.settings.get("fallbackModels") or []
        if not isinstance(entries, list) or classify(failed) not in FALLBACK_CAUSES:
            return self._end_fallback(failed)
        for index in range(self.fallback_index + 1, len(entries)):
            target = fallback_target(agent.registry, entries[index])
            if target is None or (agent.model is not None and model_ref(target[0]) == model_ref(agent.model)):
                continue
            model, level = target
            agent.emit(
                {
                    "type": "model_fallback_start",
                    "fromModel": model_ref(agent.model),
                    "toModel": model_ref(model),
                    "attempt": index + 1,
                    "maxAttempts": len(entries),
                    "errorMessage": failed.get("errorMessage", ""),
                }
            )
            if self.fallback_from is None and agent.model is not None:
                self.fallback_from = (agent.model, agent.thinking_level)
            previous, agent.model, self.fallback_index = agent.model, model, index
            if level is not None:
                agent.thinking_level = level
            agent.announce_model(model, previous, "fallback")
            _drop(agent.messages, failed)
            return True
        return self._end_fallback(failed)

    def _end_fallback(self, failed: dict[str, Any]) -> bool:
        if self.fallback_index >= 0:
            end = {"type": "model_fallback_end", "success": False, "model": model_ref(self.agent.model)}
            self.agent.emit({**end, "finalError": failed.get("errorMessage", "")})
            self.fallback_index = -1
        return False

    def restore_user_model(self) -> None:
        """Before a new prompt: the model the user chose takes back over from a fallback."""
        if self.fallback_from is None:
            return
        agent = self.agent
        (model, level), self.fallback_from = self.fallback_from, None
        self.fallback_index = -1
        previous, agent.model, agent.thinking_level = agent.model, model, level
        agent.announce_model(model, previous, "restore")


def _drop(messages: list[dict[str, Any]], failed: dict[str, Any]) -> None:
    """Take the failed reply out of the context (the retried or handed-over turn replaces it)."""
    if failed in messages:
        messages.remove(failed)
