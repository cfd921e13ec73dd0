"""``ExtensionAPI``: the host as plugins use it (the ``api`` argument of every hook); it implements
:class:`atomic_host.contract.host.HostAPI`. Events and results live in :mod:`atomic_host.contract`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from atomic_host.engine.services import HostServices

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable

    from atomic_host.contract.registrations import WorkflowDefinition
    from atomic_host.contract.tools import Tool
    from atomic_host.core.options import Options
    from atomic_host.engine.agent_session import AgentSession


class ApiHost(HostServices, Protocol):
    """What the extension API uses of the runtime (which implements it)."""

    workflow_defs: list[WorkflowDefinition]
    services: dict[str, Any]

    def require_session(self) -> AgentSession: ...

    def register_tool(self, tool: Tool) -> None: ...

    def unregister_tool(self, name: str) -> None: ...


class ExtensionAPI:
    """The host, as plugins may use it. One instance per runtime; methods act on the active session."""

    def __init__(self, runtime: ApiHost) -> None:
        self._rt = runtime

    @property
    def mode(self) -> str:
        """rpc | print | json | acp (``--mode``; ``-p`` alone is print)."""
        return self._rt.options.mode

    @property
    def session_cwd(self) -> str:
        """The active session's working directory (where its tools resolve relative paths; an ACP
        session has its client's), else :attr:`cwd`."""
        s = self._rt.session
        return s.cwd if s else self._rt.cwd

    @property
    def cwd(self) -> str:
        return self._rt.cwd

    @property
    def agent_dir(self) -> str:
        return str(self._rt.agent_dir)

    @property
    def trusted(self) -> bool:
        """Whether the project is trusted (its ``.atomic`` resources may load)."""
        return self._rt.trusted

    @property
    def settings(self) -> dict[str, Any]:
        return self._rt.settings.data

    @property
    def options(self) -> Options:
        """The command-line options (read-only by convention)."""
        return self._rt.options

    @property
    def session_id(self) -> str | None:
        s = self._rt.session
        return s.session.id if s else None

    @property
    def session_file(self) -> str | None:
        """Where the active session is stored (``sessionLocation``); None for an in-memory one."""
        s = self._rt.session
        return s.session.location if s else None

    @property
    def has_ui(self) -> bool:
        return self._rt.ui.has_ui

    @property
    def ui(self) -> Any:
        """Extension UI: ``await api.ui.select(title, options)``, ``api.ui.notify(msg)``, …"""
        return self._rt.ui

    @property
    def is_streaming(self) -> bool:
        s = self._rt.session
        return bool(s and s.is_streaming)

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
        """Add a custom message to the conversation (semantics §5.3 ``sendMessage``).

        ``deliver_as``: ``"steer"`` / ``"followUp"`` (how to queue it while the agent streams;
        steering by default), ``"nextTurn"`` (delivered after the user message of the next prompt),
        ``"interrupt"`` (abort the running run, then run with this message). When idle,
        ``trigger_turn=True`` starts a run with it; otherwise it is appended at once.

        It acts immediately, so synchronous hooks such as ``on_event`` may call it without
        awaiting. The returned awaitable may be awaited: for an ``interrupt`` it resolves once the
        aborted run has ended and the new one has started. A bad ``deliver_as`` raises ValueError.
        """
        return self._rt.require_session().send_custom_message(
            custom_type,
            content,
            display=display,
            details=details,
            trigger_turn=trigger_turn,
            deliver_as=deliver_as,
            exclude_from_context=exclude_from_context,
        )

    async def send_user_message(self, text: str, *, deliver_as: str | None = None) -> str:
        """Send a prompt as if the user typed it, literally (no slash commands, no templates;
        ``input`` hooks see source ``extension``). While the agent streams, ``deliver_as``
        (``"steer"`` / ``"followUp"``) queues it; without it the prompt is refused with the
        "Agent is already processing" error. Returns the disposition (started | queued | handled)."""
        return await self._rt.require_session().submit_extension_prompt(text, deliver_as)

    def append_entry(self, custom_type: str, data: Any = None) -> dict[str, Any]:
        """Append a ``custom`` entry (never sent to the model) and emit ``entry_appended``."""
        return self._rt.require_session().append_custom_entry(custom_type, data)

    def session_entries(self) -> list[dict[str, Any]]:
        """The active session's entries in append order (all branches, no header)."""
        s = self._rt.session
        return list(s.session.entries) if s is not None else []

    def set_session_name(self, name: str) -> None:
        self._rt.require_session().set_session_name(name)

    def set_label(self, entry_id: str, label: str | None) -> None:
        self._rt.require_session().set_label(entry_id, label)

    async def set_model(self, provider: str, model_id: str) -> dict[str, Any]:
        return self._rt.require_session().set_model(provider, model_id)

    def set_thinking_level(self, level: str) -> str:
        return self._rt.require_session().set_thinking_level(level)["level"]

    def get_all_tools(self) -> list[Tool]:
        return list(self._rt.tools.all())

    def get_active_tools(self) -> list[str]:
        return [t.name for t in self._rt.tools.active()]

    def set_active_tools(self, names: list[str]) -> None:
        self._rt.tools.set_active(names)

    def register_tool(self, tool: Tool) -> None:
        """Add a tool at run time (see :meth:`atomic_host.contract.host.HostAPI.register_tool`)."""
        self._rt.register_tool(tool)

    def unregister_tool(self, name: str) -> None:
        """Remove a plugin's tool at run time (see :meth:`atomic_host.contract.host.HostAPI.unregister_tool`)."""
        self._rt.unregister_tool(name)

    def emit(self, event: dict[str, Any]) -> None:
        """Write a raw event line to the client (for custom event types clients may understand)."""
        self._rt.out.send(event)

    async def exec(self, command: str, timeout: float | None = None) -> dict[str, Any]:
        """Run a shell command in the session cwd; returns ``{output, exitCode, cancelled, truncated}``.
        The command's environment is the bash tool's: the host's credentials left out (``shellEnv``)."""
        from atomic_host.kit.shell import run_shell
        from atomic_host.kit.tool_env import pass_through

        s = self._rt.require_session()
        keep = pass_through(self._rt.settings.get("shellEnv"))
        r = await run_shell(command, s.cwd, timeout=timeout, session_id=s.session.id, keep_env=keep)
        return {
            "output": r.output,
            "exitCode": r.exit_code,
            "cancelled": r.cancelled,
            "truncated": r.truncated,
        }

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
        """Run ``prompt`` in a new internal child session of the active one and wait for the run
        (see :meth:`atomic_host.contract.host.HostAPI.run_internal_session`)."""
        from atomic_host.engine.internal import run_internal_session

        return await run_internal_session(
            self._rt.require_session(),
            prompt,
            header=header,
            model=model,
            thinking=thinking,
            tools=tools,
            signal=signal,
        )

    def registered_workflows(self) -> list[WorkflowDefinition]:
        """The workflows plugins registered with ``register_workflows``, in load order."""
        return list(self._rt.workflow_defs)

    def provide(self, name: str, service: Any) -> None:
        """Offer a host-wide service under ``name``; :meth:`service` finds it."""
        self._rt.services[name] = service

    def service(self, name: str) -> Any:
        """A service offered with :meth:`provide`, or None."""
        return self._rt.services.get(name)

    @property
    def workflows(self) -> Any:
        """The workflow engine the built-in workflows plugin offers (``start``, ``cancel``, ``list``)."""
        engine = self._rt.services.get("workflows")
        if engine is None:
            from atomic_host.contract.errors import HostError

            raise HostError("Workflows are not available: the builtin_plugins.workflows plugin is disabled")
        return engine
