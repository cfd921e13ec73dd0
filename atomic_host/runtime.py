"""The host runtime: settings, plugins and their contributions, models, the session store and the
active :class:`AgentSession`. One per process; every frontend works through it and hands it the
two things only a frontend knows: where events go (an ``EventSink``) and the extension UI."""

from __future__ import annotations

import asyncio
import inspect
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_host.api import ExtensionAPI
from atomic_host.contract.errors import HostError
from atomic_host.contract.providers import ApiImpl, ProviderInfo
from atomic_host.contract.registrations import Exporter, SessionStoreFactory, StoreOptions, WorkflowDefinition
from atomic_host.core.models.registry import ModelRegistry, register_startup_credentials
from atomic_host.core.options import Options
from atomic_host.core.paths import agent_dir as default_agent_dir
from atomic_host.core.settings import Settings
from atomic_host.kit.log import log
from atomic_host.kit.permission_modes import ASKING, startup_mode
from atomic_host.plugins.bus import EventBus
from atomic_host.plugins.discovery import APPROVALS, BUILTIN_PLUGINS, ESSENTIAL, extension_files, project_trusted
from atomic_host.plugins.dispatch import Dispatcher
from atomic_host.plugins.faults import guard_exit
from atomic_host.plugins.manager import HELPERS_ATTR, PluginHost, PluginRecord
from atomic_host.plugins.named import NamedTable
from atomic_host.plugins.registry import CommandRegistry, Shortcut, ShortcutRegistry, ToolRegistry
from atomic_host.plugins.selection import apply_selection

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from atomic_host.contract.tools import Tool
    from atomic_host.engine.agent_session import AgentSession
    from atomic_host.engine.services import EventSink, FrontendUI
    from atomic_host.kit.sessions.store import SessionStore


CONTRIBUTION_HOOKS = (
    "register_tools",
    "register_commands",
    "register_providers",
    "register_workflows",
    "register_session_stores",
    "register_exporters",
)
"""The hooks :meth:`Runtime.collect` calls for each plugin (those of them it implements)."""


class Runtime:
    """Everything one host process owns (it implements :class:`atomic_host.engine.services.HostServices`).

    ``out`` receives every event; ``ui`` serves the extension UI. A frontend whose UI needs the
    runtime first (ACP) passes none and sets ``ui`` before :meth:`start`."""

    def __init__(self, options: Options, out: EventSink, ui: FrontendUI | None = None) -> None:
        self.options = options
        guard_exit()  # one runtime per host process: from here on plugin code cannot os._exit it
        self.cwd = os.path.realpath(options.cwd or os.getcwd())
        self.agent_dir = default_agent_dir()

        # Before any plugin loads: a plugin may print a key at import time.
        register_startup_credentials(self.agent_dir, os.environ, options.api_key)
        self.out = out
        self.ui: FrontendUI = ui  # type: ignore[assignment]  # None only until the frontend sets it
        self.api = ExtensionAPI(self)
        global_settings = Settings(self.agent_dir / "settings.json")
        self.trusted = project_trusted(
            self.agent_dir, self.cwd, global_settings.str("defaultProjectTrust"), options.approve
        )
        project = Path(self.cwd) / ".atomic" / "settings.json" if self.trusted else None
        self.settings = global_settings if project is None else Settings(global_settings.global_path, project)
        self.plugins = PluginHost(self.extension_error)
        self.plugins.hook_timeout_s = self.settings.int("hookTimeoutMs", 30000) / 1000
        self.plugins.fail_closed_all = self.settings.bool("hooks.failClosed", False)
        self.plugins.waiting_on_user = lambda: bool(self.ui.pending)
        self.watchdog: Any = None
        self.hooks = Dispatcher(self.plugins, self.api)
        """Every hook call goes through here (the combining rules live in the hookspecs)."""
        self.tools = ToolRegistry(self.extension_error)
        self.commands = CommandRegistry()
        self.shortcuts = ShortcutRegistry()
        """Keyboard shortcuts extensions registered (``get_shortcuts`` / ``invoke_shortcut``)."""
        self.events = EventBus(self.plugins)
        """The event bus between extensions (``api.events``)."""
        self.flags: dict[str, dict[str, Any]] = {}
        """Extension command-line flags (``api.register_flag``): name → ``{type, default, description, plugin}``."""
        self.providers: list[ProviderInfo] = []
        self.apis: dict[str, ApiImpl] = {}
        self.shadowed_providers: list[ProviderInfo] = []
        """Providers a later registration of the same id replaced (:meth:`unregister_provider` restores them)."""
        self._models: ModelRegistry | None = None
        self._store: SessionStore | None = None
        self.session: AgentSession | None = None
        self._http: Any = None
        self._http_proxy: str | None = None
        self.tool_state: dict[str, dict[str, Any]] = {}
        """Host-lifetime scratch space per tool plugin (``ToolContext.state``)."""
        self.workflow_defs: list[Any] = []
        """``WorkflowDefinition``s from ``register_workflows``, in load order."""
        self.store_kinds = NamedTable("store kind", SessionStoreFactory, "kind")
        """Session store kinds from ``register_session_stores`` (``sessionStore`` picks one)."""
        self.exporters = NamedTable("exporter", Exporter, "name")
        """Session exporters from ``register_exporters`` (``export_html`` uses ``html``)."""
        self.services: dict[str, Any] = {}
        """Host-wide services plugins offer (``api.provide``): the built-in ``workflows`` engine."""
        self.pending_reload: set[Path] = set()
        self.watch_task: asyncio.Task[None] | None = None
        self.exit_request: Callable[[], None] | None = None
        """Set by a frontend that can end itself cleanly (RPC: as if stdin closed); ``api.shutdown``."""

    # --- errors from plugins ---

    def extension_error(self, path: str, event: str, error: str) -> None:
        self.out.send({"type": "extension_error", "extensionPath": path, "event": event, "error": error})

    # --- plugins ---

    def load_plugins(self) -> None:
        """Built-ins, then installed packages, then local files; collect their contributions."""
        disabled = {str(n) for n in self.settings.list("disabledPlugins", []) or []}
        for name in sorted(disabled & ESSENTIAL):
            refusal = f"{name} is essential and cannot be disabled; it stays loaded"
            self.extension_error(name, "disabledPlugins", refusal)
        blocked = disabled - ESSENTIAL
        for name in BUILTIN_PLUGINS:
            self.plugins.load_module(name, "builtin", blocked)
        if not self.options.no_extensions:
            self.plugins.load_entry_points(blocked)
        for path in self.local_extension_paths():
            self.plugins.load_file(path)
        self._approvals_gate_closes()
        implementers = self.plugins.implementers(CONTRIBUTION_HOOKS)  # one pass, not one per plugin
        for record in list(self.plugins.records.values()):
            if record.status == "loaded":
                self.collect(record, implementers.get(record.name, set()))

        apply_selection(self)

    def _approvals_gate_closes(self) -> None:
        """The approvals plugin could not load while the permission mode asks for approvals: it
        stands for a fail-closed gate, so tool calls are blocked instead of running unasked. One the
        user disabled stays off (with a warning)."""
        record = self.plugins.records.get(APPROVALS)
        if record is None or record.status not in ("failed", "disabled"):
            return
        mode = startup_mode(self.options.permission_mode, self.settings.get, self.options.mode)
        if mode not in ASKING:
            return
        if record.status == "failed":
            record.fail_closed = True
        else:  # the user's choice: said, not overruled
            log.warning(f"permission mode {mode} has no effect: {APPROVALS} is disabled (disabledPlugins)")

    def local_extension_paths(self) -> list[Path]:
        paths: list[Path] = []
        if not self.options.no_extensions:
            paths += extension_files(self.agent_dir / "extensions")
            if self.trusted:
                paths += extension_files(Path(self.cwd) / ".atomic" / "extensions")
            for extra in self.settings.list("extensions", []) or []:
                if isinstance(extra, str):
                    paths.append(Path(extra).expanduser())
        for explicit in self.options.extensions:
            p = Path(explicit).expanduser()
            paths += extension_files(p) if p.is_dir() else [p]
        seen: set[Path] = set()
        unique = []
        for p in paths:
            rp = p.resolve()
            if rp not in seen:
                seen.add(rp)
                unique.append(rp)
        return unique

    def collect(self, record: PluginRecord, implemented: set[str] | None = None) -> None:
        """Run one plugin's contribution hooks and file what it registered under its name.
        ``implemented``: those of :data:`CONTRIBUTION_HOOKS` it implements, when the caller knows."""
        name, path = record.name, record.path
        if implemented is None:
            implemented = self.plugins.implemented(name, CONTRIBUTION_HOOKS)
        if not implemented:  # nothing to call: no registrars to build
            if self._models is not None:
                self._models = None
            return
        builtin = record.source == "builtin"

        def contribute(hook: str, register: Callable[[Any], None]) -> None:
            if hook in implemented:  # a call of a hook the plugin does not implement would find nothing to run
                self.hooks.call(hook, plugin=name, register=register)

        contribute("register_tools", lambda t: self.tools.add(t, name, path, builtin=builtin))
        contribute("register_commands", lambda c: self.commands.add(c, name, path))

        contribute("register_providers", lambda item: self.add_provider(item, name))

        def register_workflow(item: Any) -> None:
            if not isinstance(item, WorkflowDefinition):
                raise TypeError(f"register_workflows expects WorkflowDefinition, got {type(item).__name__}")
            item.plugin = name
            self.workflow_defs = [w for w in self.workflow_defs if w.name != item.name] + [item]

        contribute("register_workflows", register_workflow)
        contribute("register_session_stores", self.store_kinds.register_for(name))
        contribute("register_exporters", self.exporters.register_for(name))
        if record.status == "failed":  # a register_* hook raised: the plugin is failed, as for a failed import
            self.plugins.unload(name)
            self.forget(name)
        if self._models is not None:
            self._models = None  # rebuilt on next use with the new providers

    # --- providers (register_providers, and api.register_provider / unregister_provider at run time) ---

    def add_provider(self, item: ApiImpl | ProviderInfo, plugin: str) -> None:
        """File a wire API or a provider for ``plugin``; a provider replaces one with its id (kept,
        to come back when the newer one is unregistered). The model registry is rebuilt on next use."""
        item.plugin = plugin
        if isinstance(item, ApiImpl):
            self.apis[item.api] = item
        elif isinstance(item, ProviderInfo):
            replaced = [p for p in self.providers if p.id == item.id]
            self.shadowed_providers.extend(replaced)
            self.providers = [p for p in self.providers if p.id != item.id] + [item]
        else:
            raise TypeError(f"register_providers expects ApiImpl or ProviderInfo, got {type(item).__name__}")
        self._models = None

    def register_provider(self, item: ApiImpl | ProviderInfo, plugin: str) -> None:
        """``api.register_provider``: as at load, and the active session's model is refreshed from the
        new catalog (a provider registered again with another ``base_url`` moves it)."""
        self.add_provider(item, plugin)
        self._refresh_session_model()

    def unregister_provider(self, provider_id: str) -> bool:
        """``api.unregister_provider``: remove the provider ``provider_id`` (the one it replaced, if
        any, comes back); False when none is registered under that id."""
        if not any(p.id == provider_id for p in self.providers):
            return False
        self.providers = [p for p in self.providers if p.id != provider_id]
        earlier = [p for p in self.shadowed_providers if p.id == provider_id]
        if earlier:  # the latest one it replaced, if its plugin is still loaded
            self.shadowed_providers.remove(earlier[-1])
            record = self.plugins.records.get(earlier[-1].plugin)
            if record is not None and record.status == "loaded":
                self.providers.append(earlier[-1])
        self._models = None
        self._refresh_session_model()
        return True

    def _refresh_session_model(self) -> None:
        agent = self.session
        model = agent.model if agent is not None else None
        if agent is not None and model is not None:
            fresh = self.models.find(model.get("provider", ""), model.get("id", ""))
            if fresh is not None:
                agent.model = fresh

    # --- tools registered at run time (api.register_tool / unregister_tool) ---

    def register_tool(self, tool: Tool) -> None:
        """Register ``tool`` for the plugin whose module defines its handler (``runtime`` when
        none does), then recompute the selection: the model sees it from its next call on."""
        record = self._owner_record(tool)
        owner, path = (record.name, record.path) if record is not None else ("runtime", "")
        existing = self.tools.get(tool.name)
        if existing is not None and existing.plugin != owner:
            raise HostError(f'Tool "{tool.name}" is already registered by {existing.plugin}')
        self.tools.add(tool, owner, path, builtin=record is not None and record.source == "builtin")
        apply_selection(self)

    def unregister_tool(self, name: str) -> None:
        tool = self.tools.get(name)
        if tool is None:
            raise HostError(f'Tool "{name}" is not registered')
        if self.tools.is_builtin(tool):
            raise HostError(f'Tool "{name}" is built in; deactivate it with set_active_tools instead')
        self.tools.remove(name)
        apply_selection(self)

    # --- shortcuts and flags (api.register_shortcut / register_flag) ---

    def register_shortcut(self, key: str, handler: Callable[..., Any], description: str | None) -> None:
        """File a shortcut for the calling plugin; one filed for the same key before is replaced (said on stderr)."""
        if not callable(handler):
            raise TypeError(f"a shortcut handler must be callable, not {type(handler).__name__}")
        record = self.calling_plugin()
        owner, path = (record.name, record.path) if record is not None else ("runtime", "runtime")
        replaced = self.shortcuts.add(Shortcut(key, handler, description, owner, path))
        if replaced is not None and replaced.plugin != owner:
            log.warning(f"shortcut {replaced.key} of {replaced.path} is replaced by {path}")

    def register_flag(self, name: str, kind: str, default: Any, description: str | None) -> None:
        """Declare ``--name`` for the calling plugin (``kind``: boolean | string)."""
        name = name.lstrip("-")
        if not name:
            raise ValueError("a flag needs a name")
        if kind not in ("boolean", "string"):
            raise ValueError(f'a flag\'s type is "boolean" or "string", not {kind!r}')
        record = self.calling_plugin()
        plugin = record.name if record is not None else "runtime"
        self.flags[name] = {"type": kind, "default": default, "description": description, "plugin": plugin}

    def flag(self, name: str) -> bool | str | None:
        """The value of a registered flag: as given on the command line, else its default; None for
        a flag nobody registered."""
        name = name.lstrip("-")
        declared = self.flags.get(name)
        if declared is None:
            return None
        given = self.options.extension_flags.get(name)
        if given is None:
            return declared["default"]  # type: ignore[no-any-return]
        if declared["type"] == "boolean":
            return given is True or str(given).lower() not in ("false", "0", "no", "off")
        return given if isinstance(given, str) else declared["default"]

    def check_flags(self) -> None:
        """After the plugins registered their flags: a flag on the command line that none declared,
        or a string flag without a value, stops the start (``HostError``)."""
        unknown = [f"--{n}" for n in self.options.extension_flags if n not in self.flags]
        if unknown:
            raise HostError(f"Unknown option{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}")
        for name, given in self.options.extension_flags.items():
            if self.flags[name]["type"] == "string" and not isinstance(given, str):
                raise HostError(f'Extension flag "--{name}" requires a value')

    def calling_plugin(self) -> PluginRecord | None:
        """The plugin whose code called into the API: the nearest frame, up the stack, in one of the
        plugins' modules (a local extension's helper module is found through the extension that
        called it). None for host code."""
        modules = {r.module.__name__: r for r in self.plugins.records.values() if r.module is not None}
        frame = sys._getframe(1)
        while frame is not None:
            found = modules.get(frame.f_globals.get("__name__", ""))
            if found is not None:
                return found
            frame = frame.f_back  # type: ignore[assignment]
        return None

    def _owner_record(self, tool: Tool) -> PluginRecord | None:
        handler = tool.handler
        module = handler.partition(":")[0] if isinstance(handler, str) else getattr(handler, "__module__", None)
        return next(
            (r for r in self.plugins.records.values() if r.module is not None and r.module.__name__ == module), None
        )

    def forget(self, plugin: str) -> None:
        self.tools.remove_plugin(plugin)
        self.commands.remove_plugin(plugin)
        self.shortcuts.remove_plugin(plugin)
        self.events.remove_plugin(plugin)
        self.flags = {name: flag for name, flag in self.flags.items() if flag["plugin"] != plugin}
        self.providers = [p for p in self.providers if p.plugin != plugin]
        self.apis = {k: v for k, v in self.apis.items() if v.plugin != plugin}
        self.workflow_defs = [w for w in self.workflow_defs if w.plugin != plugin]
        self.store_kinds.remove_plugin(plugin)
        self.exporters.remove_plugin(plugin)

    def _before_unload(self, plugin: str) -> None:
        self.hooks.call("plugin_unload", plugin=plugin)

    def apply_pending_reloads(self) -> None:
        """Hot reload changed extension files; only called between turns."""
        paths, self.pending_reload = self.pending_reload, set()
        for path in sorted(paths):
            name = f"local:{path}"
            if not path.exists():
                if name in self.plugins.records:
                    self.plugins.unload(name, self._before_unload)
                    self.forget(name)
                    del self.plugins.records[name]
                continue
            old = self.plugins.records.get(name)
            if old is not None and old.status == "loaded":
                record = self.plugins.replace_file(path, self._before_unload)
                if record is None:
                    continue
                self.forget(name)
            else:
                self.plugins.records.pop(name, None)
                record = self.plugins.load_file(path)
                if record.status != "loaded":
                    continue
            self.collect(record)
            log.info(f"reloaded extension {path}")
        apply_selection(self)

    async def reload(self) -> None:
        """RPC ``reload`` and ``api.reload()`` (upstream's ``/reload``): ``session_shutdown``
        (reason ``reload``), settings and models.json read again, every local extension imported
        afresh (new files in the extension dirs load, removed ones unload), the built-in and
        installed plugins' commands registered again (prompt templates and skills are found
        anew), then ``session_start`` (reason ``reload``). Refused while the agent streams."""
        # lazy: contract.events is not loaded by atomic plugins, sessions or --list-models (a Runtime, no session)
        from atomic_host.contract.events import SessionShutdownEvent

        agent = self.require_session()
        if agent.is_streaming:
            raise HostError("Cannot reload while the agent is streaming")
        await self.hooks.acall("session_shutdown", event=SessionShutdownEvent("reload"))
        self.settings.reload()
        self.plugins.hook_timeout_s = self.settings.int("hookTimeoutMs", 30000) / 1000
        self.plugins.fail_closed_all = self.settings.bool("hooks.failClosed", False)
        current = set(self.local_extension_paths())
        for name, record in list(self.plugins.records.items()):
            if record.source == "local" and record.file not in current:
                if record.status == "loaded":
                    self.plugins.unload(name, self._before_unload)
                    self.forget(name)
                del self.plugins.records[name]
        self.pending_reload |= current
        self.apply_pending_reloads()
        for record in list(self.plugins.records.values()):
            if record.source != "local" and record.status == "loaded":
                self.commands.remove_plugin(record.name)
                if self.plugins.implemented(record.name, ("register_commands",)):
                    register = lambda c, r=record: self.commands.add(c, r.name, r.path)  # noqa: E731
                    self.hooks.call("register_commands", plugin=record.name, register=register)
        self._models = None
        apply_selection(self)
        await agent.fire_session_start("reload")

    def request_shutdown(self) -> None:
        """``api.shutdown()``: end the host as when the client closes stdin (the frontend's
        ``exit_request``); a frontend without one (print mode, ACP) gets the run aborted."""
        if self.exit_request is not None:
            self.exit_request()
        elif self.session is not None and self.session.is_streaming:
            self._abort_task = asyncio.ensure_future(self.session.abort())

    def helper_users(self, helper: Path) -> set[Path]:
        """The loaded local extensions that imported ``helper`` (a module beside them)."""
        return {
            r.file
            for r in self.plugins.records.values()
            if r.file is not None and helper in getattr(r.module, HELPERS_ATTR, ())
        }

    async def watch_extensions(self) -> None:
        """``--watch``: note changed extension files; they are applied between turns."""
        # lazy: watchfiles (a Rust extension) only with --watch
        from watchfiles import Change, awatch

        ext_dirs: set[Path] = set()
        if not self.options.no_extensions:
            ext_dirs.add((self.agent_dir / "extensions").resolve())
            if self.trusted:
                ext_dirs.add((Path(self.cwd) / ".atomic" / "extensions").resolve())
        files = set(self.local_extension_paths())
        watch = [str(d) for d in ext_dirs | {p.parent for p in files} if d.is_dir()]
        if not watch:
            return
        async for changes in awatch(*watch, debounce=50, step=20):
            for change, raw in changes:
                p = Path(raw).resolve()
                if p.suffix != ".py" or p.name.startswith("."):
                    continue
                users = self.helper_users(p)  # a helper module: reload the extensions that imported it
                self.pending_reload.update(users)
                if users or p.name.startswith("_"):
                    continue
                # Known files, or new files in an extensions dir (not siblings of an -e file).
                if p in files or (p.parent in ext_dirs and change is not Change.deleted):
                    self.pending_reload.add(p)
                    files.add(p)
            if self.session is None or not self.session.is_streaming:
                self.apply_pending_reloads()

    # --- models ---

    @property
    def models(self) -> ModelRegistry:
        if self._models is None:
            self._models = ModelRegistry(
                self.agent_dir,
                self.providers,
                self.apis,
                cli_api_key=self.options.api_key,
                cli_provider=self.options.provider,
                builtin_plugins={n for n, r in self.plugins.records.items() if r.source == "builtin"},
            )
            for err in getattr(self._models, "errors", []) or []:
                log.warning(f"{err}")
        return self._models

    def http_client(self) -> Any:
        """One ``httpx.AsyncClient`` for every provider request: connections and the TLS context
        are reused instead of being built per request (~10-20 ms each on a slow machine)."""
        proxy = self._proxy_setting()
        if not self.has_http_client():  # none yet, or a reloaded "proxy" setting: a new client
            # lazy: httpx (~75 ms) loads with the first provider request, not at startup (tests/perf/startup_imports)
            from atomic_host.kit.llm.http_client import new_http_client

            self._http, self._http_proxy = new_http_client(proxy=proxy), proxy
        return self._http

    def has_http_client(self) -> bool:
        """:meth:`http_client` would answer without building one."""
        return self._http is not None and self._http_proxy == self._proxy_setting()

    def _proxy_setting(self) -> str | None:
        proxy = self.settings.get("proxy")
        return proxy if isinstance(proxy, str) else None

    # --- sessions ---

    @property
    def store(self) -> SessionStore:
        """The session store, opened on first use: ``--no-session`` → in memory; otherwise the kind
        ``--session-store`` / settings ``sessionStore`` (default ``jsonl``) names, looked up among
        the registered kinds (so plugins must be loaded first)."""
        if self._store is None and self.options.no_session:
            # lazy: the session store loads with the first session (atomic plugins and --list-models never open one)
            from atomic_host.kit.sessions.store import MemoryStore

            self._store = MemoryStore()
        if self._store is None:
            # lazy: the session store loads with the first session (atomic plugins and --list-models never open one)
            from atomic_host.session.stores import DEFAULT_KIND, open_store

            kind = self.options.session_store or self.settings.str("sessionStore", DEFAULT_KIND) or DEFAULT_KIND
            session_dir = (
                self.options.session_dir
                or os.environ.get("ATOMIC_CODING_AGENT_SESSION_DIR")
                or self.settings.str("sessionDir")
            )
            options = StoreOptions(
                agent_dir=self.agent_dir,
                session_dir=Path(session_dir).expanduser() if session_dir else None,
                cwd=self.cwd,
                fsync=self.settings.str("sessionFsync") != "never",
                settings=self.settings,
            )
            self._store = open_store(self.store_kinds.items, kind, options, hint=self.disabled_note())
        return self._store

    def disabled_note(self) -> str:
        """``"disabled by disabledPlugins: a, b"`` (or ``""``): why a contribution may be missing."""
        names = [n for n, r in self.plugins.records.items() if r.status == "disabled"]
        return f"disabled by disabledPlugins: {', '.join(names)}" if names else ""

    def exporter(self, name: str) -> Exporter:
        """The registered exporter ``name``; a :class:`HostError` naming the known ones otherwise."""
        found = self.exporters.get(name)
        if found is None:
            known = ", ".join(self.exporters.names()) or "none"
            hint = self.disabled_note()
            raise HostError(f'No "{name}" exporter is registered (known: {known})' + (f"; {hint}" if hint else ""))
        return found

    def require_session(self) -> AgentSession:
        if self.session is None:
            raise RuntimeError("No active session")
        return self.session

    def write_barrier(self) -> Callable[[], Awaitable[None]]:
        """Called as a command starts: what its response awaits first (the flush barrier,
        kit/sessions/behind.py). The writes it handed over (to the session active at its start
        and to the one active at its end) are stored; a failed one is raised."""
        start = self.session.session if self.session is not None else None
        mark = start.write_mark() if start is not None else 0

        async def settled() -> None:
            if start is not None:
                await start.settled(since=mark)
            now = self.session.session if self.session is not None else None
            if now is not None and now is not start:
                await now.settled(since=0)

        return settled

    async def start(self) -> None:
        # lazy: the engine loads with the first session (atomic plugins, sessions, --list-models open none)
        from atomic_host.engine.agent_session import AgentSession
        from atomic_host.plugins.watchdog import DEFAULT_STALL_MS, start_watchdog

        if self.ui is None:
            raise RuntimeError("the frontend set no extension UI")
        self.load_plugins()
        self.watchdog = start_watchdog(
            self.settings.int("loopStallMs", DEFAULT_STALL_MS), lambda: self.plugins.module_owners
        )
        # The host's lifetime encloses the session's: host_start, then the first session_start
        # (as upstream: extensions load, then session_start); at exit session_shutdown, then host_shutdown.
        await self.hooks.acall("host_start")
        self.check_flags()
        self.session = await AgentSession.open_initial(self)
        if self.options.watch or self.settings.bool("watchExtensions", False):
            self.watch_task = asyncio.create_task(self.watch_extensions())

    async def shutdown(self) -> None:
        """stdin closed: cancel bash requests, stop the run, tell plugins, exit cleanly."""
        if self.watch_task is not None:
            self.watch_task.cancel()
        if self.watchdog is not None:
            self.watchdog.stop()
        self.ui.cancel_all()
        if self.session is not None:
            await self.session.close(reason="quit")
        await self.hooks.acall("host_shutdown")
        if self._http is not None:
            await self._http.aclose()
        for state in self.tool_state.values():
            cleanup = state.get("cleanup")
            if not callable(cleanup):
                continue
            try:
                result = cleanup()
                if inspect.isawaitable(result):
                    await result
            except Exception as exc:
                log.warning(f"tool cleanup failed: {exc}")
