"""The host side of the MCP plugin: a thread with its own event loop runs every connection.

Why a thread: importing ``mcp`` costs about a second, and the SDK parses and validates every
message with pydantic; none of that may hold up the host's loop, which answers ``get_state`` and
``abort``. The host's loop only registers tools, reports errors and waits on futures.

Imported only when at least one server is configured; it does not import ``mcp`` itself (the
thread imports :mod:`builtin_plugins.mcp.client`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from atomic_host import ToolResult
from atomic_host.contract.tools import Tool, ToolAborted, ToolError
from atomic_host.kit import secrets
from atomic_host.kit.log import log
from builtin_plugins.mcp.config import ServerConfig, tool_name
from builtin_plugins.mcp.results import to_content

if TYPE_CHECKING:
    from atomic_host import HostAPI, ToolContext
    from builtin_plugins.mcp.client import Connection

PLUGIN_PATH = "builtin:builtin_plugins.mcp"
STOP_TIMEOUT_S = 6.0
INSTALL_HINT = (
    "the mcp package is not installed: pip install 'mcp>=1.30,<3' "
    "(in the atomic-host checkout: pip install -e '.[mcp]')"
)


def selected_by_default(api: HostAPI, name: str) -> bool:
    """Whether the host's tool selection would make a tool of a built-in plugin active.

    Tools that appear after startup miss the selection the host computed then; ``get_tools``
    recomputes it (plugins/selection.py), this mirrors it until then.
    """
    opts = api.options
    if getattr(opts, "no_tools", False) or getattr(opts, "no_builtin_tools", False):
        return False
    if name in (getattr(opts, "exclude_tools", None) or []):
        return False
    selected = True
    setting = api.settings.get("defaultTools")
    for entries, empty_selects_none in ((setting, True), (getattr(opts, "tools", None), False)):
        if not isinstance(entries, list):
            continue
        entries = [str(e) for e in entries]
        plain = [e for e in entries if e and not e.startswith(("+", "-"))]
        if plain or (empty_selects_none and not entries):
            selected = name in plain
        if f"+{name}" in entries:
            selected = True
        if f"-{name}" in entries:
            selected = False
    return selected


def _mcp_settings(api: HostAPI) -> dict[str, Any]:
    value = api.settings.get("mcp")
    return value if isinstance(value, dict) else {}


class Hub:
    """Every configured server of one host: their connections, tools and status."""

    def __init__(self, api: HostAPI, servers: dict[str, ServerConfig], register: Callable[[Tool], None]) -> None:
        self.api = api
        self.servers = servers
        self.register = register
        self.host_loop: asyncio.AbstractEventLoop | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self.up: concurrent.futures.Future[None] = concurrent.futures.Future()
        self.conns: dict[str, Connection] = {}
        self.status: dict[str, dict[str, Any]] = {
            name: {"state": "failed" if cfg.error else "pending", "error": cfg.error, "tools": []}
            for name, cfg in servers.items()
        }
        self.names: dict[str, tuple[str, str]] = {}
        """Registered host tool name → (server, MCP tool name)."""
        self.offered: dict[str, set[str]] = {}
        """Server → the MCP tool names it offers now (a tool it dropped answers an error)."""
        self.stopping = False
        self.ready_by = 0.0
        """Host loop time by which every server has connected or failed (its startup timeout)."""
        self.noticed_late: set[str] = set()
        self.settled = asyncio.Event()
        """Set once no server is pending or starting (print and json modes wait for it)."""
        for cfg in servers.values():
            for label, value in cfg.secret_values():
                secrets.register(value, label)

    # --- threads and loops ---

    def start(self) -> None:
        """Start the MCP thread; servers connect in the background."""
        self.host_loop = asyncio.get_running_loop()
        longest = max((c.startup_timeout_s for c in self.servers.values() if c.error is None), default=0)
        self.ready_by = self.host_loop.time() + longest + 1
        for name, cfg in self.servers.items():
            if cfg.error:
                self.report(f'MCP server "{name}" is not usable ({cfg.source}): {cfg.error}')
        if not any(cfg.error is None for cfg in self.servers.values()):
            self.settled.set()
            return
        self.thread = threading.Thread(target=self._thread_main, name="atomic-mcp", daemon=True)
        self.thread.start()

    def _thread_main(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            try:
                # the mcp extra, imported in the hub's thread; missing, each server reports how to install it
                from builtin_plugins.mcp import client
            except ImportError as exc:
                message = INSTALL_HINT if getattr(exc, "name", "") in ("mcp", "anyio", "mcp_types") else str(exc)
                for name in self.servers:
                    self._to_host(self._set_status, name, "failed", message, None)
                self._to_host(self.report, f"MCP servers are configured but {message}")
                self.up.set_exception(ToolError(message))
                return
            events = _Events(self)
            forward = bool(_mcp_settings(self.api).get("forwardStderr", False))
            for name, cfg in self.servers.items():
                if cfg.error is None:
                    self.conns[name] = client.Connection(cfg, self.api.cwd, events, forward_stderr=forward)
            self.loop = loop
            self.up.set_result(None)
            if self.stopping:  # the host left while the SDK was being imported
                return
            for conn in self.conns.values():
                loop.call_soon(conn.start)
            loop.run_forever()
        finally:
            with contextlib.suppress(Exception):
                pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
                for task in pending:
                    task.cancel()
                if pending:
                    loop.run_until_complete(asyncio.wait(pending, timeout=1.0))
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def _to_host(self, fn: Callable[..., Any], *args: Any) -> None:
        loop = self.host_loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # the host loop is gone: the host is exiting
            loop.call_soon_threadsafe(fn, *args)

    async def run(self, coro_fn: Callable[[], Any]) -> Any:
        """Run ``coro_fn()`` on the MCP loop and await it here; cancelling this cancels it there."""
        await asyncio.wrap_future(self.up)
        assert self.loop is not None
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro_fn(), self.loop))

    async def stop(self) -> None:
        """Stop every server (stdin closed, then SIGTERM, then SIGKILL of its process group)."""
        self.stopping = True
        if self.thread is None:
            return
        loop = self.loop
        if loop is not None and not loop.is_closed():

            async def close_all() -> None:
                await asyncio.gather(*(c.stop() for c in self.conns.values()), return_exceptions=True)

            with contextlib.suppress(Exception):
                future = asyncio.run_coroutine_threadsafe(close_all(), loop)
                await asyncio.wait_for(asyncio.wrap_future(future), STOP_TIMEOUT_S)
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(loop.stop)
        # The thread's end is what SIGKILLs a survivor on Linux (PR_SET_PDEATHSIG in the launcher).
        await asyncio.to_thread(self.thread.join, 2.0)

    # --- reports and status (host loop) ---

    def report(self, message: str) -> None:
        log.warning(f"{message}")
        with contextlib.suppress(Exception):
            self.api.emit({"type": "extension_error", "extensionPath": PLUGIN_PATH, "event": "mcp", "error": message})

    def _set_status(self, name: str, state: str, error: str | None, info: dict[str, Any] | None) -> None:
        entry = self.status.setdefault(name, {"tools": []})
        entry["state"], entry["error"] = state, error
        if info is not None:
            entry["serverInfo"] = info
        if all(s.get("state") not in ("pending", "starting") for s in self.status.values()):
            self.settled.set()

    async def wait_settled(self) -> None:
        """Until every server has connected or failed (at most the longest startup timeout)."""
        limit = max((c.startup_timeout_s for c in self.servers.values()), default=0) + 2
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.settled.wait(), limit)

    async def wait_ready(self, signal: asyncio.Event | None, limit_s: float | None) -> None:
        """Before a model request: wait until every server has connected or failed (its tools are
        then registered), at most until the longest startup timeout after the start, ``limit_s``,
        or ``signal`` (an abort). A server still starting then is named once in a notice: the
        request goes without its tools."""
        loop = asyncio.get_running_loop()
        left = self.ready_by - loop.time()
        if limit_s is not None:
            left = min(left, limit_s)
        if not self.settled.is_set() and left > 0:
            waits = {asyncio.ensure_future(self.settled.wait())}
            if signal is not None:
                waits.add(asyncio.ensure_future(signal.wait()))
            try:
                await asyncio.wait(waits, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiter in waits:
                    waiter.cancel()
        late = [n for n, s in self.status.items() if s.get("state") in ("pending", "starting")]
        late = [n for n in late if n not in self.noticed_late]
        if late and not (signal is not None and signal.is_set()):
            self.noticed_late.update(late)
            names = ", ".join(f'"{n}"' for n in late)
            who = f"MCP server {names} is" if len(late) == 1 else f"MCP servers {names} are"
            message = f"{who} not ready yet: this request goes without their tools (added once connected)"
            log.warning(message)
            with contextlib.suppress(Exception):
                self.api.ui.notify(message, "warning")

    def _tools_listed(self, server: str, tools: list[dict[str, Any]]) -> None:
        cfg = self.servers[server]
        defer = bool(_mcp_settings(self.api).get("deferTools", False))
        offered: set[str] = set()
        added: list[str] = []
        for spec in tools:
            mcp_name = spec["name"]
            name = tool_name(server, mcp_name)
            owner = self.names.get(name)
            if owner is not None and owner != (server, mcp_name):
                self.report(
                    f'MCP server "{server}": tool "{mcp_name}" is skipped, its name {name} is taken by '
                    f'"{owner[1]}" of server "{owner[0]}"'
                )
                continue
            schema = spec.get("inputSchema") if isinstance(spec.get("inputSchema"), dict) else {}
            schema = {"type": "object", "properties": {}, **schema}
            description = spec.get("description") or spec.get("title") or f"{mcp_name} (MCP server {server})"
            annotations = spec.get("annotations") if isinstance(spec.get("annotations"), dict) else {}
            tool = Tool(
                name=name,
                description=str(description),
                params=schema,
                handler=self._handler(server, mcp_name),
                label=str(spec.get("title") or f"{server}: {mcp_name}"),
                source=f'mcp "{server}"',
                source_path=cfg.source,
                deferred=defer,
                read_only=annotations.get("readOnlyHint") is True,  # the server says it changes nothing
            )
            try:
                self.register(tool)
            except Exception as exc:
                self.report(f'MCP server "{server}": could not register {name}: {exc}')
                continue
            offered.add(mcp_name)
            if owner is None:
                self.names[name] = (server, mcp_name)
                added.append(name)
        self.offered[server] = offered
        self.status[server]["tools"] = sorted(n for n, (s, t) in self.names.items() if s == server and t in offered)
        new_active = [n for n in added if selected_by_default(self.api, n)]
        if new_active:
            self.api.set_active_tools([*self.api.get_active_tools(), *new_active])

    # --- tool calls (host loop) ---

    def _handler(self, server: str, mcp_name: str) -> Callable[[Any, ToolContext], Any]:
        async def handler(params: Any, ctx: ToolContext) -> ToolResult:
            return await self.call(server, mcp_name, params if isinstance(params, dict) else {}, ctx)

        return handler

    async def call(self, server: str, mcp_name: str, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if mcp_name not in self.offered.get(server, set()):
            raise ToolError(f'MCP server "{server}" no longer offers the tool "{mcp_name}"')
        if self.stopping:
            raise ToolError("the host is shutting down")
        conn = self.conns[server]
        call = asyncio.ensure_future(self.run(lambda: conn.call(mcp_name, arguments)))
        aborted = asyncio.ensure_future(ctx.signal.wait())
        try:
            await asyncio.wait({call, aborted}, return_when=asyncio.FIRST_COMPLETED)
            if not call.done():
                raise ToolAborted(f"{server}: {mcp_name} aborted")
            try:
                result = call.result()
            except Exception as exc:
                if getattr(exc, "report", False):
                    self.report(str(exc))
                raise ToolError(str(exc)) from None
        finally:
            aborted.cancel()
            if not call.done():
                call.cancel()  # reaches the MCP loop: the SDK sends notifications/cancelled
        content, details, is_error = to_content(result)
        return ToolResult(content, {"server": server, "tool": mcp_name, **details}, is_error)

    async def restart(self, server: str) -> None:
        conn = self.conns.get(server)
        if conn is None:
            raise ToolError(self.status.get(server, {}).get("error") or f'no MCP server "{server}"')
        await self.run(conn.restart)


class _Events:
    """Connection → hub, from the MCP loop to the host loop."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    def state(self, conn: Connection) -> None:
        self.hub._to_host(self.hub._set_status, conn.cfg.name, conn.state, conn.error, dict(conn.server_info))

    def tools(self, conn: Connection, tools: list[dict[str, Any]]) -> None:
        self.hub._to_host(self.hub._tools_listed, conn.cfg.name, [dict(t) for t in tools])

    def error(self, conn: Connection, message: str) -> None:
        self.hub._to_host(self.hub.report, message)
