"""Every hook a plugin can implement: the extension API of atomic-host.

Hooks are grouped by phase. Each takes keyword arguments; pluggy lets an implementation accept
any subset of them, so new arguments never break old plugins. Event hooks take one event object
(``event``) plus the host API (``api``): fields are added to the object, never to the signature.
Results are plain values or small result objects; ``None`` always means "no opinion".

Every implementation is called on its own by the host: an exception becomes an
``extension_error`` event naming the plugin, the hook and the error, and the other
implementations still run. An implementation may be ``async def``; the host awaits it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from atomic_host import hookspec

if TYPE_CHECKING:
    from atomic_host.api import Cancel, ExtensionAPI, InputResult, ToolCallDecision
    from atomic_host.commands import SlashCommand
    from atomic_host.llm.types import ApiImpl, ProviderInfo
    from atomic_host.tools import Tool


# --- Contributions: called once when the plugin is registered (and again after a hot reload) ---


@hookspec
def register_tools(register: Callable[[Tool], None], api: ExtensionAPI) -> None:
    """Register tools the model can call: ``register(Tool(...))`` once per tool. ``api`` gives
    the working directory, agent dir, settings and whether the project is trusted.

    Built-in tool names are reserved; a duplicate name is skipped with an ``extension_error``
    that names both plugins.
    """


@hookspec
def register_commands(register: Callable[[SlashCommand], None], api: ExtensionAPI) -> None:
    """Register slash commands (``/name args`` in a ``prompt``): ``register(SlashCommand(...))``.

    A command runs immediately, even while the agent is streaming, and the prompt answers
    ``disposition:"handled"``. Duplicate names get ``:1``, ``:2`` suffixes.
    """


@hookspec
def register_providers(register: Callable[[ApiImpl | ProviderInfo], None], api: ExtensionAPI) -> None:
    """Register LLM wire APIs (``ApiImpl``) and providers with their model catalogs (``ProviderInfo``)."""


# --- Host lifecycle ---


@hookspec
def host_start(api: ExtensionAPI) -> None:
    """The host has loaded every plugin and is about to serve. Start background work here."""


@hookspec
def host_shutdown(api: ExtensionAPI) -> None:
    """The host is exiting (stdin closed or a signal). Release resources; keep it quick."""


@hookspec
def plugin_unload(api: ExtensionAPI) -> None:
    """Called on one plugin only, just before it is unregistered (hot reload or disable)."""


# --- Sessions ---


@hookspec
def session_start(event: Any, api: ExtensionAPI) -> None:
    """A session became active. ``event.reason``: startup | new | resume | fork | reload;
    ``event.previous_session_file`` when one was replaced."""


@hookspec
def session_shutdown(event: Any, api: ExtensionAPI) -> None:
    """The active session is about to be replaced or the host is exiting."""


@hookspec
def session_before_switch(event: Any, api: ExtensionAPI) -> Cancel | None:
    """Before ``new_session`` / ``switch_session`` / ``import_session``. ``event.reason`` is
    new | resume; ``event.target_session_file`` for resume. Return ``Cancel()`` to stop it;
    the first cancel wins and the command answers ``{"cancelled": true}``."""


@hookspec
def session_before_fork(event: Any, api: ExtensionAPI) -> Cancel | None:
    """Before ``fork`` (``event.position == "before"``, ``event.entry_id``) or ``clone``
    (``"at"``). Return ``Cancel()`` to stop it."""


# --- Input and turns ---


@hookspec
def input(event: Any, api: ExtensionAPI) -> InputResult | None:
    """See user input before the host does (``event.text``, ``event.images``, ``event.source``:
    rpc | extension, ``event.kind``: prompt | steer | follow_up).

    Return ``InputResult.handled()`` to consume it (disposition ``handled``),
    ``InputResult.transform(text, images)`` to replace it (transforms chain in call order),
    or ``None`` to pass.
    """


@hookspec
def before_agent_start(event: Any, api: ExtensionAPI) -> dict[str, Any] | None:
    """A run is about to start for ``event.prompt``. Return ``{"system_prompt": str}`` to
    override the system prompt and/or ``{"messages": [custom message dicts]}`` to add
    custom messages after the user message."""


@hookspec
def system_prompt(event: Any, api: ExtensionAPI) -> str | None:
    """Contribute a section to the system prompt of each model call. ``event.tools`` lists the
    names of the tools the model sees. Return the text, or None to add nothing."""


@hookspec
def on_event(event: dict[str, Any], api: ExtensionAPI) -> None:
    """Observe every agent event as sent on the wire (agent_start, message_update,
    tool_execution_end, …). Must be fast: it runs for every streamed delta."""


# --- Tools ---


@hookspec
def tool_call(event: Any, api: ExtensionAPI) -> ToolCallDecision | None:
    """Gate a tool call before it runs (``event.tool_name``, ``event.tool_call_id``, ``event.input``).

    Mutate ``event.input`` in place to rewrite the arguments, or return
    ``ToolCallDecision(block=True, reason=...)`` to refuse it: the model gets an error
    result with the reason. The first block wins.
    """


@hookspec
def tool_result(event: Any, api: ExtensionAPI) -> dict[str, Any] | None:
    """Patch a tool result before the model sees it (``event.result`` is a ToolResult).
    Return ``{"content": [...], "details": {...}, "is_error": bool}`` (any subset) or None."""


@hookspec
def user_bash(event: Any, api: ExtensionAPI) -> dict[str, Any] | None:
    """Intercept a direct ``bash``/``user_bash`` command (``event.command``). Return a full
    result dict (``output``, ``exitCode``, ``cancelled``, ``truncated``) to answer it yourself."""


# --- Compaction ---


@hookspec
def session_compact(event: Any, api: ExtensionAPI) -> None:
    """A compaction boundary was written (``event.reason``: manual | threshold | overflow;
    ``event.result``: the compaction result as sent in ``compaction_end``)."""


@hookspec(firstresult=True)
def session_before_compact(event: Any, api: ExtensionAPI) -> dict[str, Any] | None:
    """Compaction strategy hook: return ``{"cancel": True}`` to refuse compaction, or
    ``{"compacted_text": str}`` to supply the compacted text yourself (rung ``extension``)."""
