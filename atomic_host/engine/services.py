"""What the engine needs from the host process: ``HostServices`` (the runtime implements it) and
``EventSink`` (each frontend supplies one). Protocols, so the engine names nothing above it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from atomic_host.contract.host import HostAPI
    from atomic_host.contract.providers import ApiImpl
    from atomic_host.contract.tools import UI
    from atomic_host.core.models.registry import ModelRegistry
    from atomic_host.core.options import Options
    from atomic_host.core.settings import Settings
    from atomic_host.kit.sessions.store import SessionStore
    from atomic_host.plugins.dispatch import Dispatcher
    from atomic_host.plugins.manager import PluginHost
    from atomic_host.plugins.registry import CommandRegistry, ToolRegistry


class EventSink(Protocol):
    """Where events go: the frontend writes them to its client (RPC: one JSON line each)."""

    def send(self, event: dict[str, Any], line: str | None = None) -> None:
        """Deliver ``event``; ``line`` is its JSON when the caller already encoded it."""
        ...


class FrontendUI(Protocol):
    """The extension UI a frontend supplies: :class:`~atomic_host.contract.tools.UI` plus the
    dialogs it is waiting on (hook time bounds pause while one is open) and a way to end them."""

    has_ui: bool
    pending: dict[str, Any]

    def cancel_all(self) -> None:
        """Answer every open dialog as cancelled (the host is exiting)."""
        ...


class HostServices(Protocol):
    """The host-wide services an :class:`~atomic_host.engine.agent_session.AgentSession` works with."""

    options: Options
    cwd: str
    agent_dir: Path
    settings: Settings
    trusted: bool
    out: EventSink
    ui: UI
    api: HostAPI
    plugins: PluginHost
    hooks: Dispatcher
    tools: ToolRegistry
    commands: CommandRegistry
    apis: dict[str, ApiImpl]
    tool_state: dict[str, dict[str, Any]]
    pending_reload: set[Path]
    session: Any
    """The active AgentSession, or None (``Any``: agent_session imports this module)."""

    @property
    def models(self) -> ModelRegistry: ...

    @property
    def store(self) -> SessionStore: ...

    def http_client(self) -> Any:
        """The shared ``httpx.AsyncClient`` for provider requests."""
        ...

    def has_http_client(self) -> bool:
        """:meth:`http_client` is built already (building one reads the CA bundle)."""
        ...

    def extension_error(self, path: str, event: str, error: str) -> None: ...

    def apply_pending_reloads(self) -> None: ...
