"""The MCP side of the plugin: one :class:`Connection` per server, on the hub's own event loop.

This module imports the ``mcp`` package (about a second on a cold start), so it is imported only in
the hub's thread and only when a server is configured. Everything here runs on that thread's loop;
the hub hands results and state changes back to the host's loop.

Results travel as wire JSON (``model_dump(by_alias=True)``), so the mapping to host content does
not depend on the SDK's major version (1.x keeps camelCase attributes, 2.x snake_case).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import os
import shutil
import sys
from collections import deque
from typing import TYPE_CHECKING, Any

import anyio
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client

from atomic_host.kit.log import log as host_log

if TYPE_CHECKING:
    from builtin_plugins.mcp.config import ServerConfig

PING_TIMEOUT_S = 5.0
"""After a tool call timed out: how long a ping may take before the server counts as hung."""
STOP_TIMEOUT_S = 5.0
"""How long a server gets to stop (the SDK closes stdin, then SIGTERMs, then SIGKILLs its group)."""
STDERR_TAIL = 20
MAX_TOOL_PAGES = 100

EXTRA_ENV = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "SYSTEMROOT")
"""Inherited besides the SDK's minimal set (HOME, LOGNAME, PATH, SHELL, TERM, USER): never the
host's credentials. A server that needs more gets it through its ``env``."""

# Linux: the server dies with the host even when the host is SIGKILLed (no process is left behind).
# The launcher sets PR_SET_PDEATHSIG and then execs the real command, keeping the pid, the pipes and
# the process group the SDK created.
LAUNCHER = (
    "import ctypes,os,signal,sys\n"
    "ctypes.CDLL(None).prctl(1,signal.SIGKILL)\n"
    "if os.getppid()!=int(sys.argv[1]):os._exit(1)\n"
    "try:os.execvp(sys.argv[2],sys.argv[2:])\n"
    "except OSError as e:sys.stderr.write(f'atomic-mcp: cannot run {sys.argv[2]}: {e.strerror}\\n');os._exit(127)\n"
)

log = logging.getLogger("mcp")  # the SDK's logger: its warnings are forwarded as one line each

SDK_1 = importlib.util.find_spec("mcp.shared.session") is not None
"""mcp 1.x: it does not tell the server when a request is abandoned; :meth:`Connection.call` does."""

_tasks: set[asyncio.Task[Any]] = set()
"""Strong references to fire-and-forget tasks (the loop keeps only weak ones)."""


def spawn(coro: Any, name: str) -> asyncio.Task[Any]:
    task = asyncio.get_running_loop().create_task(coro, name=name)
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    return task


class _OneLine(logging.Handler):
    """The SDK's log records as one stderr line each, without tracebacks (protocol errors reach the
    client as ``extension_error``; the traceback of a parse error helps nobody)."""

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            host_log.warning(f"mcp: {record.getMessage()}")


if not log.handlers:
    log.addHandler(_OneLine(logging.WARNING))
    log.propagate = False


class CallError(Exception):
    """A tool call that did not produce a result; ``report`` means it also deserves an extension_error."""

    def __init__(self, message: str, *, report: bool = False) -> None:
        super().__init__(message)
        self.report = report


class Events:
    """What a connection tells the hub (called on the MCP loop; the hub marshals to the host loop)."""

    def state(self, conn: Connection) -> None: ...
    def tools(self, conn: Connection, tools: list[dict[str, Any]]) -> None: ...
    def error(self, conn: Connection, message: str) -> None: ...


def describe(exc: BaseException) -> str:
    """One line for an exception, looking inside anyio's exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, CallError):
        return str(exc)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    name = type(exc).__name__
    if name == "McpError" or name == "MCPError":
        return text or "protocol error"
    return f"{name}: {text}" if text else name


def _wire(model: Any) -> dict[str, Any]:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


class Connection:
    """One configured server: started on demand, restarted on the next use after a failure."""

    def __init__(self, cfg: ServerConfig, cwd: str, events: Events, *, forward_stderr: bool = False) -> None:
        self.cfg = cfg
        self.forward_stderr = forward_stderr
        self.cwd = cwd
        self.events = events
        self.state = "idle"
        """idle | starting | connected | failed | stopped"""
        self.error: str | None = None
        self.tools: list[dict[str, Any]] = []
        self.server_info: dict[str, Any] = {}
        self.session: Any = None
        self.starts = 0
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL)
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._closed = asyncio.Event()
        self._stopping = False
        self._garbage_reported = False
        self._lost_reason: str | None = None
        self._stderr_task: asyncio.Task[None] | None = None

    # --- lifecycle ---

    def _set(self, state: str, error: str | None = None) -> None:
        self.state, self.error = state, error
        self.events.state(self)

    async def ensure(self) -> None:
        """Connected, or :class:`CallError`. Starts (or restarts) the server if it is not running."""
        if self.state == "connected" and self.session is not None:
            return
        if self._stopping:
            raise CallError(f'MCP server "{self.cfg.name}" is shutting down')
        if self._task is not None and not self._task.done() and self._ready is not None and self._ready.done():
            # A connection that was up is winding down: let it finish, then start anew.
            await asyncio.wait({self._task}, timeout=STOP_TIMEOUT_S + 1)
        if self._task is None or self._task.done():
            self.start()
        assert self._ready is not None
        await asyncio.shield(self._ready)  # one caller's abort must not cancel the start

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        self._ready.add_done_callback(lambda f: f.exception() if not f.cancelled() else None)  # never "unretrieved"
        self._closed = asyncio.Event()
        self._task = loop.create_task(self._run(self._ready), name=f"mcp:{self.cfg.name}")

    async def restart(self) -> None:
        await self.stop()
        self._stopping = False
        await self.ensure()

    async def stop(self) -> None:
        self._stopping = True
        self._closed.set()
        task = self._task
        if task is not None and not task.done():
            done, _ = await asyncio.wait({task}, timeout=STOP_TIMEOUT_S)
            if not done:
                task.cancel()
                await asyncio.wait({task}, timeout=1.0)
        if self.state in ("connected", "starting"):
            self._set("stopped")

    async def _run(self, ready: asyncio.Future[None]) -> None:
        self.starts += 1
        self.stderr_tail.clear()
        self._garbage_reported = False
        self._lost_reason = None
        self._stderr_task = None
        self._set("starting")
        failure: str | None = None
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await self._open(stack)
                session = await stack.enter_async_context(
                    ClientSession(
                        read,
                        write,
                        message_handler=self._on_message,
                        client_info=types.Implementation(name="atomic-host", version=_host_version()),
                    )
                )
                try:
                    with anyio.fail_after(self.cfg.startup_timeout_s):
                        init = await session.initialize()
                        tools = await self._list_tools(session)
                except TimeoutError:
                    raise CallError(
                        f"did not answer within {round(self.cfg.startup_timeout_s * 1000)} ms "
                        "(startupTimeoutMs); stopped it"
                    ) from None
                self.server_info = _wire(init).get("serverInfo", {})
                self.session, self.tools = session, tools
                self.events.tools(self, tools)  # before "connected": a waiter on the states sees the tools too
                self._set("connected")
                if not ready.done():
                    ready.set_result(None)
                await self._closed.wait()
                failure = self._lost_reason
        except asyncio.CancelledError:
            failure = "cancelled"
            if not self._stopping:
                raise
        except BaseException as exc:  # anything the SDK or the transport raises ends this connection only
            failure = describe(exc)
        finally:
            self.session = None
        if self._stderr_task is not None and not self._stopping:
            # The process is gone: its last stderr lines (the reason, usually) are about to arrive.
            await asyncio.wait({self._stderr_task}, timeout=0.5)
        if self._stopping:
            self._set("stopped")
            message = f'MCP server "{self.cfg.name}" was stopped'
        else:
            message = self._failure_text(failure or "the connection closed")
            self._set("failed", message)
            self.events.error(self, message)
        if not ready.done():
            ready.set_exception(CallError(message))

    def _failure_text(self, reason: str) -> str:
        verb = "failed" if self.state == "connected" else "failed to start"
        text = f'MCP server "{self.cfg.name}" {verb}: {reason}'
        tail = [line for line in self.stderr_tail if line.strip()]
        if tail:
            text += f" (stderr: {tail[-1].strip()[:300]})"
        return text

    async def _open(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        cfg = self.cfg
        if cfg.transport == "stdio":
            return await self._open_stdio(stack)
        if cfg.transport == "sse":
            # per transport: only the configured one's client module loads
            from mcp.client.sse import sse_client

            streams = await stack.enter_async_context(sse_client(cfg.url, headers=cfg.headers or None))
            return streams[0], streams[1]
        try:  # mcp 2.x (and late 1.x): headers go on the HTTP client
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client
        except ImportError:  # mcp 1.x
            # mcp 1.x's name for the same transport
            from mcp.client.streamable_http import streamablehttp_client

            streams = await stack.enter_async_context(streamablehttp_client(cfg.url, headers=cfg.headers or None))
            return streams[0], streams[1]
        client = await stack.enter_async_context(create_mcp_http_client(headers=cfg.headers or None))
        streams = await stack.enter_async_context(streamable_http_client(cfg.url, http_client=client))
        return streams[0], streams[1]

    async def _open_stdio(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        cfg = self.cfg
        env = get_default_environment()
        env.update({k: os.environ[k] for k in EXTRA_ENV if k in os.environ})
        env.update(cfg.env)
        cwd = os.path.join(self.cwd, cfg.cwd) if cfg.cwd else self.cwd
        resolved = shutil.which(cfg.command, path=env.get("PATH")) if os.sep not in cfg.command else cfg.command
        if resolved is None or not os.path.exists(resolved):
            raise CallError(f"command not found: {cfg.command}")
        command, args = resolved, list(cfg.args)
        if sys.platform.startswith("linux"):
            command, args = sys.executable, ["-I", "-S", "-c", LAUNCHER, str(os.getpid()), resolved, *args]
        params = StdioServerParameters(command=command, args=args, env=env, cwd=cwd)
        read_fd, write_fd = os.pipe()
        errlog = os.fdopen(write_fd, "w")
        try:
            streams = await stack.enter_async_context(stdio_client(params, errlog=errlog))
        finally:
            errlog.close()  # the child has its own copy: EOF on read_fd now means the server is gone
        self._read_stderr(read_fd)
        return streams[0], streams[1]

    def _read_stderr(self, fd: int) -> None:
        """Keep the last lines (for error messages; with ``mcp.forwardStderr`` also copied to the
        host's stderr, masked);
        EOF means the server exited, which is checked at once instead of at the next call."""
        loop = asyncio.get_running_loop()
        pipe = os.fdopen(fd, "rb", buffering=0)
        reader = asyncio.StreamReader(limit=1 << 20)

        async def pump() -> None:
            try:
                await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
                while True:
                    try:
                        raw = await reader.readline()
                    except ValueError:  # a line over the limit
                        raw = b"(a very long line)\n"
                    if not raw:
                        break
                    line = raw.decode("utf-8", "replace").rstrip("\n")
                    self.stderr_tail.append(line)
                    if self.forward_stderr:
                        host_log.warning(f"mcp[{self.cfg.name}]: {line}")
            finally:
                pipe.close()
            if self.state in ("connected", "starting") and not self._stopping:
                spawn(self._check_alive(), f"mcp-ping:{self.cfg.name}")

        self._stderr_task = spawn(pump(), f"mcp-stderr:{self.cfg.name}")

    async def _check_alive(self) -> None:
        session = self.session
        if session is None:
            return
        try:
            with anyio.fail_after(PING_TIMEOUT_S):
                await session.send_ping()
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                raise
            self._lost("it exited or stopped answering")

    def _lost(self, reason: str) -> None:
        """The server died or hangs: end the connection (its task reports it); the next use restarts it."""
        if self._task is not None and not self._task.done() and not self._stopping:
            self._lost_reason = self._lost_reason or reason
            self.session = None  # new calls wait for this connection to end, then start another
            self._closed.set()

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            if not self._garbage_reported:
                self._garbage_reported = True
                self.events.error(
                    self, f'MCP server "{self.cfg.name}" sent an invalid message: {describe(message)[:300]}'
                )
            return
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/tools/list_changed" and self.session is not None:
            spawn(self._relist(), f"mcp-relist:{self.cfg.name}")

    async def _relist(self) -> None:
        session = self.session
        if session is None:
            return
        try:
            with anyio.fail_after(self.cfg.startup_timeout_s):
                tools = await self._list_tools(session)
        except Exception as exc:
            self.events.error(self, f'MCP server "{self.cfg.name}": listing its tools failed: {describe(exc)}')
            return
        self.tools = tools
        self.events.tools(self, tools)

    async def _list_tools(self, session: Any) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(MAX_TOOL_PAGES):
            if cursor is None:
                page = _wire(await session.list_tools())
            else:
                page = _wire(await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor)))
            tools += [t for t in page.get("tools", []) if isinstance(t, dict) and isinstance(t.get("name"), str)]
            cursor = page.get("nextCursor")
            if not cursor:
                break
        return tools

    # --- calls ---

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """``tools/call`` within the tool timeout; the wire JSON of the result, or :class:`CallError`."""
        await self.ensure()
        session = self.session
        if session is None:
            raise CallError(self.error or f'MCP server "{self.cfg.name}" is not connected')
        name = self.cfg.name
        request_id = getattr(session, "_request_id", None) if SDK_1 else None  # the id call_tool will use
        try:
            with anyio.fail_after(self.cfg.tool_timeout_s):
                result = await session.call_tool(tool, arguments)
        except (TimeoutError, asyncio.CancelledError) as exc:
            if request_id is not None:
                await _cancel_request(session, request_id, "timed out" if isinstance(exc, TimeoutError) else "aborted")
            if isinstance(exc, asyncio.CancelledError):
                raise
            ms = round(self.cfg.tool_timeout_s * 1000)
            spawn(self._check_alive(), f"mcp-ping:{self.cfg.name}")
            raise CallError(
                f'MCP server "{name}": {tool} timed out after {ms} ms (mcp.toolTimeoutMs)', report=True
            ) from None
        except Exception as exc:
            if self.session is not session or self.state != "connected" or _closed_error(exc):
                # The connection's own report (extension_error) says why; it restarts on next use.
                self._lost(f"the connection closed during {tool}")
                tail = [line for line in self.stderr_tail if line.strip()]
                extra = f" (stderr: {tail[-1].strip()[:300]})" if tail else ""
                raise CallError(
                    f'MCP server "{name}" failed during {tool}: {describe(exc)}{extra}; it is restarted on next use'
                ) from None
            raise CallError(f'MCP server "{name}": {tool} failed: {describe(exc)}') from None
        return _wire(result)


async def _cancel_request(session: Any, request_id: Any, reason: str) -> None:
    """``notifications/cancelled`` for an abandoned request (mcp 1.x; 2.x sends it itself)."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(1.0), contextlib.suppress(Exception):
        params = types.CancelledNotificationParams(requestId=request_id, reason=reason)
        await session.send_notification(types.ClientNotification(types.CancelledNotification(params=params)))


def _closed_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "connection closed" in text or isinstance(exc, (anyio.ClosedResourceError, anyio.BrokenResourceError))


def _host_version() -> str:
    try:
        # in the try: the MCP handshake never fails over a version string
        from atomic_host import __version__

        return str(__version__)
    except Exception:
        return "0"
