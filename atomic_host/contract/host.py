"""``HostAPI``: the host as plugins may use it — the ``api`` argument of every hook.

A Protocol, so the contract names no class above it; the runtime's ``ExtensionAPI`` implements it.
Methods act on the active session.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import asyncio

    from atomic_host.contract.registrations import WorkflowDefinition
    from atomic_host.contract.tools import UI, Tool


class HostAPI(Protocol):
    """What a plugin may read and do. Attributes are read-only by convention."""

    @property
    def mode(self) -> str:
        """rpc | print | json | acp"""
        ...

    @property
    def cwd(self) -> str: ...

    @property
    def session_cwd(self) -> str:
        """The active session's working directory (an ACP session has its client's), else :attr:`cwd`."""
        ...

    @property
    def agent_dir(self) -> str: ...

    @property
    def trusted(self) -> bool:
        """Whether the project is trusted (its ``.atomic`` resources may load)."""
        ...

    @property
    def settings(self) -> dict[str, Any]: ...

    @property
    def options(self) -> Any:
        """The command-line options."""
        ...

    @property
    def session_id(self) -> str | None: ...

    @property
    def session_file(self) -> str | None:
        """Where the active session is stored (``sessionLocation``); None for an in-memory one."""
        ...

    @property
    def has_ui(self) -> bool: ...

    @property
    def ui(self) -> UI:
        """Extension UI: ``await api.ui.select(title, options)``, ``api.ui.notify(msg)``, …"""
        ...

    @property
    def is_streaming(self) -> bool: ...

    def send_message(
        self,
        custom_type: str,
        content: str | list[dict[str, Any]],
        *,
        display: bool = True,
        details: Any = None,
        trigger_turn: bool = False,
        deliver_as: str | None = None,
        exclude_from_context: bool = False,
    ) -> Awaitable[None]:
        """Add a custom message to the conversation (semantics §5.3 ``sendMessage``). Acts at once
        (synchronous hooks may call it); the returned awaitable may be awaited."""
        ...

    async def send_user_message(self, text: str, *, deliver_as: str | None = None) -> str:
        """Send a prompt as if the user typed it (source ``extension``)."""
        ...

    def append_entry(self, custom_type: str, data: Any = None) -> dict[str, Any]:
        """Append a ``custom`` entry (never sent to the model) and emit ``entry_appended``."""
        ...

    def session_entries(self) -> list[dict[str, Any]]:
        """The active session's entries in append order (all branches, no header); empty
        without a session. A new list of the stored dicts: read them, do not change them."""
        ...

    def set_session_name(self, name: str) -> None: ...

    def set_label(self, entry_id: str, label: str | None) -> None: ...

    async def set_model(self, provider: str, model_id: str) -> dict[str, Any]: ...

    def set_thinking_level(self, level: str) -> str: ...

    def get_all_tools(self) -> list[Tool]: ...

    def get_active_tools(self) -> list[str]: ...

    def set_active_tools(self, names: list[str]) -> None: ...

    def register_tool(self, tool: Tool) -> None:
        """Add (or replace one of your own) tool at any time; the model sees it from its next call
        on, active unless ``opt_in``. A name another plugin registered raises ``HostError``."""
        ...

    def unregister_tool(self, name: str) -> None:
        """Remove a tool registered by a plugin (``HostError`` for an unknown or built-in one;
        deactivate built-ins with :meth:`set_active_tools`). Takes effect from the next model call."""
        ...

    def emit(self, event: dict[str, Any]) -> None:
        """Write a raw event line to the client (for custom event types clients may understand)."""
        ...

    async def exec(self, command: str, timeout: float | None = None) -> dict[str, Any]:
        """Run a shell command in the session cwd; returns ``{output, exitCode, cancelled, truncated}``.
        The command's environment is the bash tool's: the host's credentials left out (``shellEnv``)."""
        ...

    async def run_internal_session(
        self,
        prompt: str,
        *,
        header: dict[str, Any] | None = None,
        model: str | None = None,
        thinking: str | None = None,
        tools: list[str] | None = None,
        signal: asyncio.Event | None = None,
    ) -> dict[str, Any]:
        """Run ``prompt`` as one agent run in a new child session of the active one, and wait.

        ``header`` is added to the child's session header (``{"internal": True, "workflow":
        {"runId", "stageId", "stageName"}}`` hides it from ``list_sessions``); ``model`` is
        ``provider/model[:level]`` (default: the active session's model), ``tools`` narrows the
        active tools, ``signal`` aborts the run when set. Its events are not sent to the client.
        Returns ``{sessionId, sessionFile, model, text, stopReason, errorMessage?,
        unresolvedOverflow}``: ``text`` is the last assistant text.
        """
        ...

    def registered_workflows(self) -> list[WorkflowDefinition]:
        """The workflows plugins registered with ``register_workflows``, in load order."""
        ...

    def provide(self, name: str, service: Any) -> None:
        """Offer a host-wide service under ``name`` (the built-in workflows plugin offers
        ``workflows``); the RPC frontend and other plugins find it with :meth:`service`."""
        ...

    def service(self, name: str) -> Any:
        """A service offered with :meth:`provide`, or None."""
        ...

    @property
    def workflows(self) -> Any:
        """The workflow engine: ``await api.workflows.start(name, input)`` → runId,
        ``await api.workflows.cancel(run_id)``, ``api.workflows.list()`` (definitions). Raises
        ``HostError`` when the built-in workflows plugin is disabled."""
        ...
