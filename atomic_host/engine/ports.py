"""What the compaction driver, the summaries and the retry need of the session engine: narrow Protocols.

``engine/compaction.py``, ``engine/summaries.py`` and ``engine/branch_summary.py`` take these
instead of ``AgentSession``, so they import nothing of it (the session engine satisfies them as it
is, structurally) and a test can drive them with a small stand-in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import asyncio

    from atomic_host.contract.providers import StreamOptions
    from atomic_host.engine.services import HostServices
    from atomic_host.kit.sessions.tree import Session


class SummaryPorts(Protocol):
    """What the session and branch summaries need: the session, its model and how to call it."""

    rt: HostServices
    """The drivers use its ``settings``, ``options``, ``hooks`` and ``models``."""
    session: Session
    model: dict[str, Any] | None
    summary_task: asyncio.Task[None] | None
    """The running background session summary, if any (the driver owns it)."""

    @property
    def is_streaming(self) -> bool: ...

    def require_model(self) -> dict[str, Any]:
        """The session's model, or raise the ``HostError`` that says why none can run."""
        ...

    def stream_options(self) -> StreamOptions:
        """Fresh provider options for the session's model (key, headers, reasoning, signal …)."""
        ...


class CompactionPorts(SummaryPorts, Protocol):
    """What the compaction driver needs: the context, the run it may interrupt, the triggers' state."""

    thinking_level: str
    auto_compaction: bool
    auto_retry: bool
    compaction_job: Any
    """The running ``compaction.Job``, if any (the driver owns it)."""
    overflow_recovered: bool
    """Set once an overflow was recovered in this turn: a second one is not retried."""
    abort_signal: asyncio.Event

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The in-memory context (after the last boundary)."""
        ...

    def emit(self, event: dict[str, Any]) -> None: ...

    async def abort(self) -> None:
        """Abort the running run and wait until it ended."""
        ...

    def rebuild_context(self, restore_model: bool = True) -> None:
        """Rebuild ``messages`` from the session's branch (after a boundary was written)."""
        ...


class RetryPorts(Protocol):
    """What auto-retry and fallback models (``engine/retry.py``) need of the session engine."""

    rt: HostServices
    """Its ``settings`` (retry and ``fallbackModels``) and ``models`` (fallback targets)."""
    model: dict[str, Any] | None
    thinking_level: str
    auto_retry: bool

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The in-memory context: a retried or handed-over failure leaves it."""
        ...

    def emit(self, event: dict[str, Any]) -> None: ...

    def announce_model(self, model: dict[str, Any], previous: dict[str, Any] | None, source: str) -> None:
        """Tell the client and the plugins that ``model`` answers now."""
        ...
