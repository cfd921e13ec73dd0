"""``HostAPI``: the host as plugins may use it — the ``api`` argument of every hook.

A Protocol, so the contract names no class above it; the runtime's ``ExtensionAPI`` implements it.
Methods act on the active session.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import asyncio

    from atomic_host.contract.providers import ApiImpl, ProviderInfo
    from atomic_host.contract.registrations import WorkflowDefinition
    from atomic_host.contract.tools import UI, Tool


class HostAPI(Protocol):
    """What a plugin may read and do. Attributes are read-only by convention."""

    mode: str
    """rpc | print | json"""

    @property
    def cwd(self) -> str: ...

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

    def send_messages(
        self, messages: list[dict[str, Any]], *, trigger_turn: bool = False, deliver_as: str | None = None
    ) -> Awaitable[None]:
        """Several custom messages (``{"customType", "content", "display"?, "details"?,
        "excludeFromContext"?}`` each) admitted together, in order, delivered as :meth:`send_message`
        delivers one: with ``trigger_turn`` while idle, one run starts with all of them."""
        ...

    async def send_user_message(
        self,
        content: str | list[dict[str, Any]],
        *,
        deliver_as: str | None = None,
        expand_prompt_templates: bool = False,
    ) -> str:
        """Send a prompt as if the user typed it (source ``extension``): text, or text and image
        parts (``{"type": "image", "data": <base64>, "mimeType"}``). Literal unless
        ``expand_prompt_templates`` (then a slash command runs, a template or a skill expands)."""
        ...

    def append_entry(self, custom_type: str, data: Any = None) -> dict[str, Any]:
        """Append a ``custom`` entry (never sent to the model) and emit ``entry_appended``."""
        ...

    def session_entries(self) -> list[dict[str, Any]]:
        """The active session's entries in append order (all branches, no header); empty
        without a session. A new list of the stored dicts: read them, do not change them."""
        ...

    # --- the session's state ---

    @property
    def model(self) -> dict[str, Any] | None:
        """The active session's model (the wire Model dict), or None."""
        ...

    @property
    def thinking_level(self) -> str:
        """The active session's thinking level."""
        ...

    @property
    def session_name(self) -> str | None:
        """The active session's name, or None."""
        ...

    @property
    def scoped_models(self) -> list[dict[str, Any]]:
        """The models ``--models`` / ``enabledModels`` scope the session to (empty: unscoped)."""
        ...

    def get_commands(self) -> list[dict[str, Any]]:
        """The slash commands, as ``get_commands`` lists them."""
        ...

    def get_context_usage(self) -> dict[str, Any] | None:
        """``{tokens, contextWindow, percent}`` as ``get_session_stats``' ``contextUsage``, or None."""
        ...

    async def get_system_prompt(self) -> str:
        """The host's system prompt of the next model call."""
        ...

    # --- acting ---

    def is_idle(self) -> bool:
        """No run is in progress."""
        ...

    def has_pending_messages(self) -> bool:
        """Steering or follow-up messages are queued."""
        ...

    async def abort(self) -> None:
        """Abort the running run (as the ``abort`` command)."""
        ...

    def compact(self) -> asyncio.Task[dict[str, Any]]:
        """Start a manual compaction; the task's result is what ``compact`` answers."""
        ...

    def shutdown(self) -> None:
        """End the host cleanly, as when the client closes stdin (print mode, ACP: abort the run)."""
        ...

    # --- session control, from a slash command's or a shortcut's handler only (else HostError) ---

    async def wait_for_idle(self) -> None:
        """Wait until the running run (if any) has ended."""
        ...

    async def new_session(self, *, parent_session: str | None = None) -> dict[str, Any]:
        """A new session becomes active: ``{"cancelled": bool}``."""
        ...

    async def fork(self, entry_id: str, *, position: str = "before") -> dict[str, Any]:
        """Fork and switch to the fork: ``before`` a user prompt (``{"cancelled", "text"}``) or
        ``at`` the current leaf (``{"cancelled"}``)."""
        ...

    async def switch_session(self, session: str) -> dict[str, Any]:
        """Resume a stored session by id or file path: ``{"cancelled": bool}``."""
        ...

    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool = False,
        label: str | None = None,
    ) -> dict[str, Any]:
        """Move the leaf: ``{"cancelled", "editorText"?, "summaryEntry"?}``."""
        ...

    async def reload(self) -> None:
        """Discover extensions, prompt templates, skills, settings and models.json again."""
        ...

    # --- shortcuts, flags, the event bus ---

    def register_shortcut(self, key: str, handler: Any, *, description: str | None = None) -> None:
        """Offer a keyboard shortcut (``ctrl+k``; matched without case): clients list them with
        ``get_shortcuts`` and run one with ``invoke_shortcut``; ``handler(api)``, sync or async,
        runs as a slash command does. A later registration of the key replaces it."""
        ...

    def register_flag(
        self, name: str, *, type: str = "boolean", default: bool | str | None = None, description: str | None = None
    ) -> None:
        """Declare the command-line flag ``--name`` (``type``: boolean | string). Declare it in a
        registration hook or ``host_start``: once they have run, a flag on the command line that no
        plugin declared stops the start with ``Unknown option: --name``."""
        ...

    def get_flag(self, name: str) -> bool | str | None:
        """The flag's value: as given (a boolean flag given alone is True), else its default; None
        for a flag no plugin declared."""
        ...

    @property
    def events(self) -> Any:
        """The event bus between extensions: ``api.events.emit(channel, data)`` calls every
        ``api.events.on(channel, handler)`` listener (``on`` returns the unsubscribe function)."""
        ...

    def set_session_name(self, name: str) -> None: ...

    def set_label(self, entry_id: str, label: str | None) -> None: ...

    async def set_model(self, provider: str, model_id: str) -> dict[str, Any]: ...

    def set_thinking_level(self, level: str) -> str: ...

    def get_all_tools(self) -> list[Tool]: ...

    def get_active_tools(self) -> list[str]: ...

    def set_active_tools(self, names: list[str]) -> None: ...

    def register_provider(self, item: ApiImpl | ProviderInfo) -> None:
        """Add a wire API (``ApiImpl``) or a provider and its models (``ProviderInfo``) at any time,
        as ``register_providers`` does at load: a provider replaces one with the same id (which
        comes back when this one is unregistered). Its models are in ``get_available_models`` at
        once, and the active session's model is refreshed from the new catalog."""
        ...

    def unregister_provider(self, provider_id: str) -> None:
        """Remove the provider ``provider_id`` and its models (the provider it replaced, if any,
        comes back). No effect when none is registered under that id."""
        ...

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
        cwd: str | None = None,
        parent_session: str | None = None,
    ) -> dict[str, Any]:
        """Run ``prompt`` as one agent run in a new child session of the active one, and wait.

        ``header`` is added to the child's session header (``{"internal": True, "workflow":
        {"runId", "stageId", "stageName"}}`` hides it from ``list_sessions``); ``model`` is
        ``provider/model[:level]`` (default: the active session's model), ``tools`` narrows the
        active tools, ``signal`` aborts the run when set. Its events are not sent to the client.
        With ``cwd`` the run is headless: the child belongs to that project and to the session at
        ``parent_session``, and nothing of the active session (if any) is used (give ``model``).
        Returns ``{sessionId, sessionFile, model, text, stopReason, errorMessage?,
        unresolvedOverflow}``: ``text`` is the last assistant text.
        """
        ...

    async def append_to_session(
        self,
        location: str,
        custom_type: str,
        content: str,
        *,
        display: bool = True,
        details: Any = None,
        unless: Callable[[list[dict[str, Any]]], bool] | None = None,
    ) -> bool:
        """Append a custom message to the stored session at ``location`` (not the active one),
        under its write lock; False when ``unless(entries)`` (read under the lock) says not to.
        Raises while another process has that session open, or when the store has no such session."""
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
