"""``ExtensionAPI``: the host as plugins use it (the ``api`` argument of every hook); it implements
:class:`atomic_host.contract.host.HostAPI`. Events and results live in :mod:`atomic_host.contract`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from atomic_host.contract.errors import HostError
from atomic_host.engine.services import HostServices

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable, Callable

    from atomic_host.contract.providers import ApiImpl, ProviderInfo
    from atomic_host.contract.registrations import WorkflowDefinition
    from atomic_host.contract.tools import Tool
    from atomic_host.core.options import Options
    from atomic_host.engine.agent_session import AgentSession
    from atomic_host.plugins.bus import EventBus
    from atomic_host.plugins.manager import PluginRecord
    from atomic_host.plugins.registry import ShortcutRegistry


class ApiHost(HostServices, Protocol):
    """What the extension API uses of the runtime (which implements it)."""

    workflow_defs: list[WorkflowDefinition]
    services: dict[str, Any]

    def require_session(self) -> AgentSession: ...

    def register_tool(self, tool: Tool) -> None: ...

    def unregister_tool(self, name: str) -> None: ...

    events: EventBus
    shortcuts: ShortcutRegistry

    def calling_plugin(self) -> PluginRecord | None: ...

    def register_shortcut(self, key: str, handler: Any, description: str | None) -> None: ...

    def register_flag(self, name: str, kind: str, default: Any, description: str | None) -> None: ...

    def flag(self, name: str) -> bool | str | None: ...

    def request_shutdown(self) -> None: ...

    async def reload(self) -> None: ...

    def register_provider(self, item: ApiImpl | ProviderInfo, plugin: str) -> None: ...

    def unregister_provider(self, provider_id: str) -> bool: ...


class ExtensionAPI:
    """The host, as plugins may use it. One instance per runtime; methods act on the active session."""

    mode = "rpc"

    def __init__(self, runtime: ApiHost) -> None:
        self._rt = runtime

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
        from atomic_host.engine.agent_session import custom_message

        message = custom_message(
            custom_type, content, display=display, details=details, exclude_from_context=exclude_from_context
        )
        return self._rt.require_session().send_custom_message(
            [message], trigger_turn=trigger_turn, deliver_as=deliver_as
        )

    def send_messages(
        self, messages: list[dict[str, Any]], *, trigger_turn: bool = False, deliver_as: str | None = None
    ) -> Awaitable[None]:
        """Several custom messages admitted together, in order (see ``HostAPI.send_messages``)."""
        from atomic_host.engine.agent_session import custom_message

        if not isinstance(messages, list) or not messages:
            raise ValueError("send_messages takes a non-empty list of messages")
        built = []
        for m in messages:
            if not isinstance(m, dict):
                raise TypeError(f"a message is a dict with customType and content, not {type(m).__name__}")
            built.append(
                custom_message(
                    m.get("customType", ""),
                    m.get("content", ""),
                    display=m.get("display", True),
                    details=m.get("details"),
                    exclude_from_context=bool(m.get("excludeFromContext")),
                )
            )
        return self._rt.require_session().send_custom_message(built, trigger_turn=trigger_turn, deliver_as=deliver_as)

    async def send_user_message(
        self,
        content: str | list[dict[str, Any]],
        *,
        deliver_as: str | None = None,
        expand_prompt_templates: bool = False,
    ) -> str:
        """Send a prompt as if the user typed it (``input`` hooks see source ``extension``): text,
        or a list of ``{"type": "text", "text"}`` / ``{"type": "image", "data", "mimeType"}``
        parts. Literal, unless ``expand_prompt_templates`` (then a slash command runs, a template or
        skill expands, as for a client's prompt). While the agent streams, ``deliver_as``
        (``"steer"`` / ``"followUp"``) queues it; without it the prompt is refused with the "Agent
        is already processing" error. Returns the disposition (started | queued | handled)."""
        agent = self._rt.require_session()
        return await agent.submit_extension_prompt(content, deliver_as, expand_prompt_templates)

    def append_entry(self, custom_type: str, data: Any = None) -> dict[str, Any]:
        """Append a ``custom`` entry (never sent to the model) and emit ``entry_appended``."""
        return self._rt.require_session().append_custom_entry(custom_type, data)

    def session_entries(self) -> list[dict[str, Any]]:
        """The active session's entries in append order (all branches, no header)."""
        s = self._rt.session
        return list(s.session.entries) if s is not None else []

    # --- reading the session's state ---

    @property
    def model(self) -> dict[str, Any] | None:
        """The active session's model (the wire Model dict), or None."""
        s = self._rt.session
        return s.model if s else None

    @property
    def thinking_level(self) -> str:
        """The active session's thinking level (off … max)."""
        s = self._rt.session
        return s.thinking_level if s else "off"

    @property
    def session_name(self) -> str | None:
        """The active session's name (``set_session_name``), or None."""
        s = self._rt.session
        return s.session.name if s else None

    @property
    def scoped_models(self) -> list[dict[str, Any]]:
        """The models ``--models`` / ``enabledModels`` scope the session to; empty when unscoped."""
        s = self._rt.session
        return list(s.scoped_models()) if s else []

    def get_commands(self) -> list[dict[str, Any]]:
        """The slash commands, as ``get_commands`` lists them."""
        return self._rt.commands.listing()

    def get_context_usage(self) -> dict[str, Any] | None:
        """``{tokens, contextWindow, percent}`` of the active session, as ``get_session_stats``'
        ``contextUsage``; None without a model that states its context window."""
        from atomic_host.session.stats import session_stats

        s = self._rt.session
        return session_stats(s).get("contextUsage") if s else None

    async def get_system_prompt(self) -> str:
        """The host's system prompt of the next model call (before ``before_agent_start`` or a
        ``before_provider_request`` hook changes what is sent)."""
        return await self._rt.require_session().active.system_prompt()

    # --- acting on the run ---

    def is_idle(self) -> bool:
        """No run is in progress."""
        s = self._rt.session
        return not (s and s.is_streaming)

    def has_pending_messages(self) -> bool:
        """Steering or follow-up messages are queued."""
        s = self._rt.session
        return bool(s and (s.queues.steering or s.queues.follow_up))

    async def abort(self) -> None:
        """Abort the running run, as the ``abort`` command does (a no-op when idle)."""
        await self._rt.require_session().abort()

    def compact(self) -> asyncio.Task[dict[str, Any]]:
        """Start a manual compaction and return at once; the task's result is what ``compact``
        answers (await it, or not: a failure is then logged)."""
        import asyncio

        runner = self._rt.require_session().runner
        task = asyncio.ensure_future(runner.compactor.manual(runner))
        task.add_done_callback(_log_failure)
        return task

    def shutdown(self) -> None:
        """End the host cleanly, as when the client closes stdin (RPC: the commands received so
        far are answered, ``session_shutdown`` and ``host_shutdown`` run, exit 0). In print mode
        and ACP the running run is aborted."""
        self._rt.request_shutdown()

    # --- session control: from a slash command's or a shortcut's handler only ---

    def _in_command(self, what: str) -> None:
        from atomic_host.engine.prompting import in_command

        if not in_command():
            raise HostError(f"api.{what}() is only available in a slash command's or a shortcut's handler")

    async def wait_for_idle(self) -> None:
        """Wait until the running run (if any) has ended."""
        self._in_command("wait_for_idle")
        await self._rt.require_session().wait_idle()

    async def new_session(self, *, parent_session: str | None = None) -> dict[str, Any]:
        """A new session becomes the active one (as ``new_session``): ``{"cancelled": bool}``."""
        from atomic_host.engine import navigation

        self._in_command("new_session")
        return {"cancelled": not await navigation.new_session(self._rt, parent_session=parent_session)}

    async def fork(self, entry_id: str, *, position: str = "before") -> dict[str, Any]:
        """Fork and switch to the fork (as ``fork``): ``position="before"`` keeps the path up to the
        parent of user prompt ``entry_id`` (``{"cancelled", "text"}``: the prompt's text);
        ``"at"`` keeps it up to ``entry_id``, which must be the current leaf (as ``clone``)."""
        from atomic_host.engine import navigation

        self._in_command("fork")
        if position == "at":
            if entry_id != self._rt.require_session().session.leaf_id:
                raise HostError('fork(position="at") forks at the current leaf; navigate_tree there first')
            return {"cancelled": not await navigation.clone(self._rt)}
        if position != "before":
            raise ValueError(f'position is "before" or "at", not {position!r}')
        forked = await navigation.fork(self._rt, entry_id)
        return {"cancelled": forked.cancelled, "text": forked.text}

    async def switch_session(self, session: str) -> dict[str, Any]:
        """Resume a stored session, by id or file path (as ``switch_session``): ``{"cancelled"}``."""
        import os

        from atomic_host.engine import navigation

        self._in_command("switch_session")
        by_path = os.sep in session or session.endswith(".jsonl")
        loaded = await navigation.open_session(
            self._rt, session_id=None if by_path else session, path=session if by_path else None
        )
        return {"cancelled": not await navigation.switch_session(self._rt, loaded)}

    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool = False,
        label: str | None = None,
    ) -> dict[str, Any]:
        """Move the leaf (as ``navigate_tree``): ``{"cancelled", "editorText"?, "summaryEntry"?}``."""
        from atomic_host.engine import navigation

        self._in_command("navigate_tree")
        move = await navigation.navigate_tree(
            self._rt,
            target_id,
            summarize=summarize,
            custom_instructions=custom_instructions,
            replace_instructions=replace_instructions,
            label=label,
        )
        return move.wire()

    async def reload(self) -> None:
        """Discover extensions, prompt templates, skills and settings again (as ``reload``)."""
        self._in_command("reload")
        await self._rt.reload()

    # --- shortcuts, flags, the event bus ---

    def register_shortcut(self, key: str, handler: Any, *, description: str | None = None) -> None:
        """Offer a keyboard shortcut (``get_shortcuts`` / ``invoke_shortcut``; see ``HostAPI``)."""
        self._rt.register_shortcut(key, handler, description)

    def register_flag(
        self, name: str, *, type: str = "boolean", default: bool | str | None = None, description: str | None = None
    ) -> None:
        """Declare the command-line flag ``--name`` (see ``HostAPI.register_flag``)."""
        self._rt.register_flag(name, type, default, description)

    def get_flag(self, name: str) -> bool | str | None:
        """A declared flag's value (see ``HostAPI.get_flag``)."""
        return self._rt.flag(name)

    @property
    def events(self) -> Events:
        """The event bus between extensions: ``api.events.emit(channel, data)``,
        ``off = api.events.on(channel, handler)``."""
        return Events(self._rt)

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

    def register_provider(self, item: ApiImpl | ProviderInfo) -> None:
        """Add a wire API or a provider at run time (see ``HostAPI.register_provider``)."""
        record = self._rt.calling_plugin()
        self._rt.register_provider(item, record.name if record is not None else "runtime")

    def unregister_provider(self, provider_id: str) -> None:
        """Remove a provider at run time (see :meth:`atomic_host.contract.host.HostAPI.unregister_provider`)."""
        self._rt.unregister_provider(provider_id)

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
        cwd: str | None = None,
        parent_session: str | None = None,
    ) -> dict[str, Any]:
        """Run ``prompt`` in a new internal child session (of the active one, or headless in
        ``cwd`` under ``parent_session``) and wait for the run
        (see :meth:`atomic_host.contract.host.HostAPI.run_internal_session`)."""
        from atomic_host.engine.internal import run_internal_session

        return await run_internal_session(
            self._rt,
            self._rt.session if cwd is not None else self._rt.require_session(),
            prompt,
            header=header,
            model=model,
            thinking=thinking,
            tools=tools,
            signal=signal,
            cwd=cwd,
            parent_session=parent_session,
        )

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
        """Append a custom message to a stored session that is not the active one (see
        :meth:`atomic_host.contract.host.HostAPI.append_to_session`)."""
        import asyncio

        from atomic_host.engine.internal import append_to_stored_session

        entry = {"customType": custom_type, "content": content, "display": display, "details": details}
        return await asyncio.to_thread(append_to_stored_session, self._rt, location, entry, unless)

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


class Events:
    """``api.events``: emit and subscribe by channel name (``atomic_host.plugins.bus``)."""

    __slots__ = ("_rt",)

    def __init__(self, rt: ApiHost) -> None:
        self._rt = rt

    def emit(self, channel: str, data: Any = None) -> None:
        """Call every listener of ``channel`` with ``data`` (async listeners run as their own tasks)."""
        self._rt.events.emit(channel, data)

    def on(self, channel: str, handler: Any) -> Any:
        """Subscribe ``handler(data)`` (sync or async) to ``channel``; returns the unsubscribe
        function. A plugin's listeners go when it is unloaded or reloaded."""
        record = self._rt.calling_plugin()
        return self._rt.events.on(channel, handler, record.name if record is not None else "runtime")


def _log_failure(task: Any) -> None:
    """A compaction nobody awaited that failed: logged, not left as an unretrieved exception."""
    if not task.cancelled() and task.exception() is not None:
        from atomic_host.kit.log import log

        log.warning(f"compaction started by a plugin failed: {task.exception()}")
