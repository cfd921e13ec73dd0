"""The RPC server loop: parse, route to a lane, dispatch, answer.

Two lanes (semantics §1): ordinary commands run one at a time in arrival order; control
commands (abort, bash, UI responses, …) run at once. Which commands are which, and how each is
validated, comes from the command table (``frontends/rpc/table.py``). Bad input always gets a
response and never stops the server.
"""

from __future__ import annotations

import asyncio
import contextvars
import signal
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from atomic_host.contract.errors import HostError as CommandFailed  # raised for a success:false response
from atomic_host.core.jsonfast import loads_strict
from atomic_host.frontends.rpc.io import Output, decode_line, open_stdin_lines, write_failure
from atomic_host.frontends.rpc.table import Handler
from atomic_host.kit.log import log

NO_DATA = object()
"""Return from a handler to send a response without a ``data`` key."""

NO_RESPONSE = object()
"""Return from a handler to send no response at all (``extension_ui_response`` is never answered)."""

_lane_hold: contextvars.ContextVar[asyncio.Future[None] | None] = contextvars.ContextVar("lane_hold", default=None)
"""In an ordinary command's task (and the tasks it starts): resolving it lets the lane go on."""


def release_lane() -> None:
    """Let the ordinary lane serve the next commands while the calling command waits for the
    client (a dialog: a client may ignore it, and must still get answers to ``get_state`` or
    ``prompt``). The command goes on outside the lane and still gets its one response when it
    ends. A no-op outside an ordinary command, or once its lane has moved on."""
    hold = _lane_hold.get()
    if hold is not None and not hold.done():
        hold.set_result(None)


class RpcServer:
    """Reads JSONL commands from stdin until EOF and answers on the shared :class:`Output`."""

    def __init__(
        self,
        out: Output,
        handlers: Mapping[str, Handler],
        on_eof: Callable[[], Awaitable[None]],
        on_first_response: Callable[[], None] | None = None,
        explain: Callable[[str], str] | None = None,
        concurrent: frozenset[str] = frozenset(),
        write_barrier: Callable[[], Callable[[], Awaitable[None]]] | None = None,
    ) -> None:
        """``handlers``: command ``type`` → handler (a :class:`~atomic_host.frontends.rpc.table.CommandTable`,
        whose handlers validate what they take); ``concurrent``: the commands that skip the ordinary lane;
        ``write_barrier``: called as an ordinary command starts, it gives what the command's success
        response awaits first (``Runtime.write_barrier``: its session writes stored). Control commands
        (``abort`` …) acknowledge no write and answer at once."""
        self.out = out
        self.explain = explain
        """Extends a command's error text for the person reading it (how to configure a model)."""
        self.handlers = handlers
        self.concurrent = concurrent
        self.on_eof = on_eof
        self.on_first_response = on_first_response
        self.write_barrier = write_barrier
        self.ordinary: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.tasks: set[asyncio.Task[None]] = set()
        self.exit_code = 0
        self._stop = asyncio.Event()
        self._leave = asyncio.Event()

    def request_shutdown(self) -> None:
        """End as at EOF (exit 0): the commands received so far finish, then ``on_eof``
        (``api.shutdown()`` from a plugin)."""
        self._leave.set()

    async def serve(self) -> int:
        loop = asyncio.get_running_loop()
        self._catch_signals(loop)
        self.out.on_broken = lambda exc: loop.is_closed() or loop.call_soon_threadsafe(self._client_gone, exc)
        lines = await open_stdin_lines()
        worker = asyncio.create_task(self._ordinary_lane())
        reader = asyncio.create_task(self._read(lines))
        stop = asyncio.create_task(self._stop.wait())
        leave = asyncio.create_task(self._leave.wait())
        await asyncio.wait({reader, stop, leave}, return_when=asyncio.FIRST_COMPLETED)
        leave.cancel()
        if not self._stop.is_set():
            # EOF (or request_shutdown, after which later lines are not read): finish every command
            # already received, then shut down cleanly; a signal meanwhile still ends the host at once.
            reader.cancel()
            finish = asyncio.create_task(self._finish(worker))
            await asyncio.wait({finish, stop}, return_when=asyncio.FIRST_COMPLETED)
            if not self._stop.is_set():
                stop.cancel()
                return self.exit_code
            finish.cancel()
        # signal: leave now, sessions are already durable
        reader.cancel()
        worker.cancel()
        return self.exit_code

    async def _finish(self, worker: asyncio.Task[None]) -> None:
        await self.ordinary.put(None)
        await worker
        await self.on_eof()
        if self.tasks:
            await asyncio.wait(self.tasks, timeout=10)

    def _catch_signals(self, loop: asyncio.AbstractEventLoop) -> None:
        """SIGTERM, SIGHUP and SIGINT end the server with 143, 129 and 130 (:meth:`_terminate`, run
        on the loop). Once the loop is closed a signal has its default effect again (asyncio's
        ``loop.close()`` removes the handlers)."""
        for sig, code in ((signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)):
            try:
                loop.add_signal_handler(sig, self._terminate, code)
            except (RuntimeError, NotImplementedError):  # not the main thread, or no signals here
                return

    def _client_gone(self, exc: OSError) -> None:
        """A write to stdout failed: nothing the host does can be seen any more, so it leaves, the
        run stopped, as for SIGHUP, with :func:`write_failure`'s status."""
        code, line = write_failure(exc)
        log.warning(line)
        self._terminate(code)

    def _terminate(self, code: int) -> None:
        self.exit_code = code
        self._stop.set()

    async def _read(self, lines: asyncio.Queue[bytes | None]) -> None:
        while (line := await lines.get()) is not None:
            if not line.strip():
                continue
            try:
                self.accept(line)
            except Exception as exc:  # never let one line stop the reader: it owes an answer and no more
                log.warning(f"could not route a command: {type(exc).__name__}: {exc}")
                self.out.error("parse", None, f"Failed to route command: {type(exc).__name__}: {exc}")

    def accept(self, line: bytes) -> None:
        """Decode one line and hand it to its lane; anything undecodable is answered here."""
        try:
            cmd = loads_strict(decode_line(line))
        except RecursionError:
            self.out.error("parse", None, "Failed to parse command: JSON nested too deeply")
            return
        except (ValueError, UnicodeDecodeError) as exc:
            self.out.error("parse", None, f"Failed to parse command: {exc}")
            return
        if not isinstance(cmd, dict):
            self.out.error("unknown", None, "Invalid command: expected a JSON object")
            return
        ctype = cmd.get("type")
        if not isinstance(ctype, str):
            shown = "undefined" if ctype is None else _short(ctype)
            self.out.error("unknown", cmd.get("id"), f"Unknown command: {shown}")
            return
        if ctype not in self.handlers:
            self.out.error(_short(ctype), cmd.get("id"), f"Unknown command: {_short(ctype)}")
            return
        if ctype in self.concurrent:
            task = asyncio.create_task(self.run(cmd))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        else:
            self.ordinary.put_nowait(cmd)

    async def _ordinary_lane(self) -> None:
        loop = asyncio.get_running_loop()
        while (cmd := await self.ordinary.get()) is not None:
            hold: asyncio.Future[None] = loop.create_future()
            context = contextvars.copy_context()
            context.run(_lane_hold.set, hold)
            task = asyncio.create_task(self.run(cmd), context=context)
            try:
                await asyncio.wait({task, hold}, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                task.cancel()
                raise
            if not task.done():  # released (release_lane): it ends outside the lane
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)

    async def run(self, cmd: dict[str, Any]) -> None:
        """Run one command (its handler validates it); exactly one response, whatever happens."""
        ctype: str = cmd["type"]
        req_id = cmd.get("id")
        settled = self.write_barrier() if self.write_barrier is not None and ctype not in self.concurrent else None
        try:
            data = await self.handlers[ctype](cmd)
            if settled is not None:
                await settled()
        except CommandFailed as exc:
            message = str(exc) if self.explain is None else self.explain(str(exc))
            self.out.error(ctype, req_id, message, **exc.extra)
        except asyncio.CancelledError:
            me = asyncio.current_task()
            if me is not None and me.cancelling():  # this lane is being stopped: the host is leaving
                self.out.error(ctype, req_id, "Command cancelled: the host is shutting down")
                raise
            # Something the handler awaited was cancelled (e.g. a job cancelled by another command):
            # that is this command's failure, and the lane must live on to serve the next one.
            self.out.error(ctype, req_id, "Command cancelled")
        except Exception as exc:
            if type(exc).__name__ != "CommandError":
                log.warning(f"{ctype} failed: {type(exc).__name__}: {exc}")
            self.out.error(ctype, req_id, str(exc) or type(exc).__name__)
        else:
            if data is not NO_RESPONSE:
                payload = None if data is NO_DATA else data
                self.out.respond(ctype, req_id, payload, has_data=data is not NO_DATA)
        if self.on_first_response is not None:
            callback, self.on_first_response = self.on_first_response, None
            callback()


def _short(value: Any, limit: int = 200) -> str:
    """A client's value quoted back in an error: scalars as text, cut at ``limit`` characters (a
    50 MB ``type`` is not echoed whole); containers by their kind (a 10,000-deep one cannot be printed)."""
    text = value if isinstance(value, str) else type(value).__name__ if isinstance(value, (list, dict)) else str(value)
    return text if len(text) <= limit else text[:limit] + "…"
