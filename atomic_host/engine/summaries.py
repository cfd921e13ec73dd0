"""One-line session summaries generated in the background after a run (semantics §2.6): the driver.

After ``agent_end``, once idle, the ``summarize`` hook (``kind="session"``; the built-in
``summaries`` plugin is its default) writes one sentence about the conversation; it is stored as a
``session_summary`` entry that ``list_sessions`` and ``get_session_summary`` show. This module
decides when one is due, offers the session's model and stores the answer. A new prompt or a tree
navigation cancels it; failures are silent for the client. :class:`Summarizer` owns the running
summary task and works on :class:`~atomic_host.engine.ports.SummaryPorts`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from atomic_host.contract.events import Requester, SummarizeEvent
from atomic_host.contract.results import Failure, Summary
from atomic_host.engine.retry import summarization_request
from atomic_host.kit.log import log

if TYPE_CHECKING:
    from atomic_host.contract.providers import StreamOptions
    from atomic_host.engine.ports import SummaryPorts


def _newest_conversation_id(entries: list[dict[str, Any]]) -> str | None:
    for entry in reversed(entries):
        if entry.get("type") == "message" and (entry.get("message") or {}).get("role") in ("user", "assistant"):
            return entry["id"]
    return None


def should_summarize(agent: SummaryPorts) -> str | None:
    """The id to summarize through, or None when generation is off or not needed."""
    enabled = agent.settings.get("sessionSummary.enabled")
    if agent.options.mode != "rpc" or enabled is False or agent.model is None or agent.session.is_internal:
        return None
    if agent.session.writer is None:
        return None  # an in-memory session (--no-session) is never listed: nobody would see it
    if enabled is not True:
        info = agent.registry.provider_info(agent.model["provider"])
        if info is not None and not info.background_summaries:
            return None  # e.g. scripted replies belong to the test that scripted them: opt in explicitly
    if not agent.hooks.has_impls("summarize"):
        return None
    branch = agent.session.branch()
    if len(branch) < 4:
        return None
    through = _newest_conversation_id(branch)
    current = agent.session.summary()
    if through is None or (current and current.get("summarizedThroughId") == through):
        return None
    return through


def requester(agent: SummaryPorts, model: dict[str, Any], shape: Any, retry_source: str | None = None) -> Requester:
    """The session's model as a ``summarize`` hook may ask it: ``shape(options)`` adjusts the
    request options. A missing API implementation is an error answer, not an exception. With
    ``retry_source`` (``"branchSummary"``) transient failures are retried as compaction's are
    (``engine/retry.py`` :func:`summarization_request`); the background summary never retries."""

    async def once(context: dict[str, Any]) -> dict[str, Any]:
        # lazy: kit.llm.complete is off startup's path (the first summary loads it)
        from atomic_host.kit.llm.complete import complete

        stream_fn = agent.registry.stream_fn(model["api"])
        if stream_fn is None:
            message = f"No API implementation registered for {model['api']}"
            return {"role": "assistant", "content": [], "stopReason": "error", "errorMessage": message}
        options = agent.stream_options()
        shape(options)
        return await complete(stream_fn, model, context, options)

    if retry_source is None:
        return Requester(model, once)

    async def request(context: dict[str, Any]) -> dict[str, Any]:
        return await summarization_request(agent, lambda: once(context), retry_source)

    return Requester(model, request)


def _background(options: StreamOptions) -> None:
    options.reasoning = None
    options.cache_retention = "none"
    options.session_id = None
    options.signal = asyncio.Event()  # cancellation comes from the task


async def generate(agent: SummaryPorts, through: str, busy: Callable[[], bool]) -> None:
    """Ask the ``summarize`` hook and store its answer, unless ``busy()`` or something newer arrived."""
    # lazy: session.context is off startup's path (the first prompt loads it)
    from atomic_host.session.context import build_session_context

    model = agent.model
    assert model is not None
    branch = agent.session.branch()
    event = SummarizeEvent(
        "session", branch, build_session_context(branch).messages, requester=requester(agent, model, _background)
    )
    answer = await agent.hooks.acall("summarize", event=event)
    if isinstance(answer, Failure):
        log.warning(f"session summary failed: {answer.message}")
        return
    if not isinstance(answer, Summary):
        return
    text = answer.text
    # Store it only if nothing newer arrived meanwhile.
    if text and not busy() and _newest_conversation_id(agent.session.branch()) == through:
        fields: dict[str, Any] = {"summary": text, "summarizedThroughId": through}
        if answer.usage:
            fields["usage"] = answer.usage
        agent.session.append("session_summary", **fields)


class Summarizer:
    """The background session summary of one session: at most one task at a time."""

    def __init__(self, agent: SummaryPorts) -> None:
        self._agent = agent
        self.task: asyncio.Task[None] | None = None

    def schedule(self, busy: Callable[[], bool]) -> None:
        """Start a background summary if one is due (called when a run has settled); ``busy()``
        says a run started meanwhile (then the answer is not stored)."""
        self.cancel()
        through = should_summarize(self._agent)
        if through is None:
            return
        agent = self._agent

        async def run() -> None:
            try:
                await generate(agent, through, busy)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # failures are silent for the client
                log.warning(f"session summary failed: {exc}")

        self.task = asyncio.create_task(run())

    def cancel(self) -> None:
        task = self.task
        if task is not None and not task.done():
            task.cancel()
        self.task = None
