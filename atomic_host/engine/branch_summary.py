"""The summary of the branch ``navigate_tree`` leaves (``summarize: true``): the driver.

The ``summarize`` hook (``kind="branch"``; the built-in ``summaries`` plugin is its default)
writes it with the session's model; this module picks the abandoned entries and asks. It works on
:class:`~atomic_host.engine.ports.SummaryPorts`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from atomic_host.contract.events import SummarizeEvent
from atomic_host.contract.results import Failure, Summary
from atomic_host.engine.summaries import requester

if TYPE_CHECKING:
    from atomic_host.contract.providers import StreamOptions
    from atomic_host.engine.ports import SummaryPorts

NO_STRATEGY = (
    "No summary strategy: no plugin implements the summarize hook "
    "(the built-in builtin_plugins.summaries is in disabledPlugins?)"
)


def abandoned_path(agent: SummaryPorts, old_leaf: str | None, new_leaf: str | None) -> list[dict[str, Any]]:
    """Entries from the common ancestor (exclusive) down to the old leaf."""
    session = agent.session
    if old_leaf is None:
        return []
    kept = {e["id"] for e in session.branch(new_leaf)} if new_leaf else set()
    return [e for e in session.branch(old_leaf) if e["id"] not in kept]


def _no_reasoning(options: StreamOptions) -> None:
    options.reasoning = None


async def summarize_entries(
    agent: SummaryPorts, entries: list[dict[str, Any]], instructions: str | None, replace: bool = False
) -> tuple[str, dict[str, Any] | None]:
    """The ``summarize`` hook's summary of ``entries``: (text, usage). RuntimeError when it failed."""
    # lazy: session.context is not needed by ACP's start, which imports this module (through navigation)
    from atomic_host.session.context import build_session_context

    model = agent.require_model()
    hooks = agent.hooks
    if not hooks.has_impls("summarize"):
        raise RuntimeError(NO_STRATEGY)
    event = SummarizeEvent(
        "branch",
        entries,
        build_session_context(entries).messages,
        instructions,
        replace,
        requester(agent, model, _no_reasoning, retry_source="branchSummary"),
    )
    answer = await hooks.acall("summarize", event=event)
    if isinstance(answer, Failure):
        raise RuntimeError(answer.message)
    if not isinstance(answer, Summary):
        raise RuntimeError("Branch summary failed: the summary strategy gave no result (see extension_error)")
    return answer.text, answer.usage
