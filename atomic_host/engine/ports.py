"""What the session's drivers need of the active session: narrow Protocols.

``engine/compaction.py``, ``engine/summaries.py``, ``engine/branch_summary.py`` and
``engine/retry.py`` take these instead of the concrete classes, so they import nothing of them (the
:class:`~atomic_host.engine.active.ActiveSession` and the
:class:`~atomic_host.engine.runner.Runner` satisfy them structurally) and a test can drive each
with a small stand-in. Each lists only what its user calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import asyncio

    from atomic_host.contract.providers import StreamOptions
    from atomic_host.core.models.registry import ModelRegistry
    from atomic_host.core.options import Options
    from atomic_host.core.settings import Settings
    from atomic_host.kit.sessions.tree import Session
    from atomic_host.plugins.dispatch import Dispatcher


class SummaryPorts(Protocol):
    """What the session and branch summaries need: the session, its model and how to call it
    (with the session's retry settings, reported as events)."""

    session: Session
    hooks: Dispatcher
    settings: Settings
    options: Options
    registry: ModelRegistry
    auto_retry: bool

    def emit(self, event: dict[str, Any]) -> None: ...

    @property
    def model(self) -> dict[str, Any] | None: ...

    def require_model(self) -> dict[str, Any]:
        """The session's model, or raise the ``HostError`` that says why none can run."""
        ...

    def stream_options(self, signal: asyncio.Event | None = None) -> StreamOptions:
        """Fresh provider options for the session's model (key, headers, reasoning, signal …)."""
        ...


class CompactionPorts(SummaryPorts, Protocol):
    """What the compaction driver needs: the context, the session's settings, the events."""

    thinking_level: str
    auto_compaction: bool

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The in-memory context (after the last boundary)."""
        ...

    def rebuild_context(self, restore_model: bool = True) -> None:
        """Rebuild ``messages`` from the session's branch (after a boundary was written)."""
        ...


class RunControl(Protocol):
    """The running run, as a manual compaction sees it: it aborts it first."""

    @property
    def is_streaming(self) -> bool: ...

    async def abort(self) -> None:
        """Abort the running run and wait until it ended."""
        ...


class RetryPorts(Protocol):
    """What auto-retry and fallback models (``engine/retry.py``) need of the active session."""

    settings: Settings
    """Retry settings and ``fallbackModels``."""
    registry: ModelRegistry
    """Fallback targets."""
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
