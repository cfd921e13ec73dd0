"""``RpcClient``: starts ``atomic --mode rpc`` as a subprocess and drives it over JSON lines.

The transport (reading, waiting, the host's death), the run API (``stream``, ``run``), dialogs
(``can_use_tool``, ``on_ui_request``, the OAuth login flow) and the lifecycle live here; the
command methods are generated from the protocol (:mod:`atomic_host.client.commands`).
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import os
import stat
import sys
import time
import weakref
from collections.abc import AsyncIterator, Callable
from typing import Any

from atomic_host.client.approvals import answer_of, approval_of
from atomic_host.client.commands import CommandMethods
from atomic_host.client.errors import ClientTimeout, HostExited, RpcError, RunFailed
from atomic_host.client.options import AtomicOptions, CanUseTool, UiHandler, default_command
from atomic_host.client.records import EventLog, loads_deep
from atomic_host.client.run import RunResult
from atomic_host.client.types import BashResultData, Event, ExtensionUiRequest, ImageContent, parse_event

DIALOGS = frozenset({"select", "confirm", "input", "editor"})
"""UI methods that wait for an answer (the ``oauth_*`` prompts too: :data:`OAUTH_ASKS`)."""
OAUTH_ASKS = frozenset({"oauth_prompt", "oauth_select", "oauth_manual_code"})
SESSION_CHANGING = frozenset({"new_session", "switch_session", "import_session", "fork", "clone"})
"""Commands after which the client asks for the session id again."""


class RpcClient(CommandMethods):
    """Drives one host subprocess over JSONL.

    ``RpcClient(AtomicOptions(...))`` is the usual start; ``RpcClient(["--provider", "faux"],
    command=..., cwd=..., env=...)`` (argv, and an ``env`` that replaces the whole environment) is
    the older form and still works.

    ``stderr`` is where the host's diagnostics go. By default the client reads them through a pipe
    and copies them to its own ``sys.stderr``, keeping the last few kilobytes for
    :class:`HostExited` and :meth:`get_stderr`; a file descriptor of a regular file (a log) is read
    back at the end for the same purpose; anything else (``DEVNULL``, a terminal, ``PIPE`` read by
    the caller) gives errors without a stderr tail."""

    def __init__(
        self,
        options: AtomicOptions | list[str] | None = None,
        *,
        command: list[str] | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        stderr: int | None = None,
        max_records: int | None = 200_000,
    ) -> None:
        if isinstance(options, AtomicOptions):
            self.options = options
            self.command = [*(options.command or default_command()), "--mode", "rpc"]
            self.args = options.argv()
            self.cwd = os.fspath(options.cwd) if options.cwd is not None else None
            self.env: dict[str, str] | None = options.environment()
            stderr, max_records = options.stderr, options.max_records
        else:
            self.options = AtomicOptions()
            self.command = command or [*default_command(), "--mode", "rpc"]
            self.args = list(options or [])
            self.cwd = cwd
            self.env = env
        self.stderr = stderr
        self.can_use_tool: CanUseTool | None = self.options.can_use_tool
        """Answers the approvals plugin's dialogs (``Allow`` / ``Deny``); None leaves them to
        :attr:`on_ui_request` (or unanswered)."""
        self.on_ui_request: UiHandler | None = self.options.on_ui_request
        """Answers every other extension UI request (see docs/client.md)."""
        self.abort_on_exit = self.options.abort_on_exit
        self.proc: asyncio.subprocess.Process | None = None
        self.events: EventLog = EventLog(max_records)
        """Every event, as the raw wire dict (``stream()`` and ``wait_for_event`` give typed ones)."""
        self.responses: EventLog = EventLog(max_records)
        self.lines: EventLog = EventLog(max_records)
        """Every stdout line, verbatim (tests check that nothing but JSON is printed); the newest
        ``max_records`` of each kind are kept (None: all)."""
        self.exit_code: int | None = None
        """The host's exit status once it has exited (after ``close()`` / ``async with``, or once
        its output ended)."""
        self.failure: HostExited | None = None
        """Set when the host's output ended: what every waiter is told from then on."""
        self.session_id: str | None = None
        """The current session's id as last learned (``run()`` asks when it does not know)."""
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._listeners: list[Callable[[dict[str, Any]], None]] = []
        self._arrival: asyncio.Future[None] | None = None
        """Resolved when the next records arrive (see :meth:`_until`)."""
        self._ended: asyncio.Future[None] | None = None
        """Resolved when the host's output has ended and :attr:`failure` is set."""
        self._reader: asyncio.Task[None] | None = None
        self._stderr_tail = bytearray()
        self._stderr_reader: asyncio.Task[None] | None = None
        self._streaming = False
        """Between ``agent_start`` and ``agent_settled``: a run (or its retries, queue) is going."""
        self._abandoned = 0
        """How many runs were left (a stream given up, a timeout) and aborted, not yet settled."""
        self._logins: dict[str, UiHandler | None] = {}
        """``loginId`` -> the handler of that login's ``oauth_*`` requests."""
        self._tasks: set[asyncio.Task[Any]] = set()
        self._stream_refs: set[weakref.ref[Any]] = set()

    # --- lifecycle ---

    async def start(self) -> RpcClient:
        """Start the host (``async with`` does it)."""
        env = dict(os.environ if self.env is None else self.env)
        self.proc = await asyncio.create_subprocess_exec(
            *self.command,
            *self.args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE if self.stderr is None else self.stderr,
            cwd=self.cwd,
            env=env,
        )
        self.failure, self.exit_code, self.session_id = None, None, None
        self._streaming, self._abandoned = False, 0
        self._stderr_tail.clear()
        self._ended = asyncio.get_running_loop().create_future()
        if self.stderr is None:
            self._stderr_reader = asyncio.create_task(self._copy_stderr())
        self._reader = asyncio.create_task(self._read())
        return self

    async def __aenter__(self) -> RpcClient:
        return await self.start()

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    async def close(self, timeout: float = 10) -> int | None:
        """Close stdin (the host exits 0) and wait for the process; returns its exit status."""
        if self.proc is None:
            return None
        if self.proc.stdin and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        if self._reader:
            await asyncio.wait({self._reader}, timeout=2)
        if self._stderr_reader and not self._stderr_reader.done():
            self._stderr_reader.cancel()  # a child of the host may hold its stderr open
        self.exit_code = self.proc.returncode
        return self.exit_code

    stop = close
    """The TypeScript client's name for :meth:`close`."""

    async def restart(self, session: str | None = None) -> RpcClient:
        """Stop the host and start it again with the same options; ``session`` (an id or a file)
        opens that session, as ``--session`` does. Records received so far stay (cursors keep
        working); pending waits end with :class:`HostExited`."""
        await self.close()
        if session is not None:
            args, skip = [], False
            for arg in self.args:
                if skip or arg == "--session":
                    skip = not skip
                    continue
                args.append(arg)
            self.args = [*args, "--session", session]
        return await self.start()

    def get_stderr(self) -> str:
        """What the client kept of the host's stderr (its last 8 KB; see ``stderr``)."""
        if self._stderr_reader is not None:
            return bytes(self._stderr_tail).decode(errors="replace")
        return _file_tail(self.stderr).decode(errors="replace")

    # --- reading ---

    async def _read(self) -> None:
        try:
            await self._read_lines()
        finally:
            # However the output ended (EOF, a read error, this task cancelled): every waiter wakes.
            me = asyncio.current_task()
            if me is not None and me.cancelling():
                self._end(self.proc.returncode if self.proc else None, "")
            else:
                self._end(*await self._exit_details())

    async def _read_lines(self) -> None:
        assert self.proc and self.proc.stdout
        buffer = bytearray()
        while chunk := await self.proc.stdout.read(1 << 16):
            # Scan only the new bytes for LF: a 50 MB record must not cost one pass per chunk.
            pos = chunk.find(b"\n")
            if pos < 0:
                buffer += chunk
                continue
            buffer += chunk
            *lines, rest = bytes(buffer).split(b"\n")
            buffer = bytearray(rest)
            for raw in lines:
                self._dispatch(raw.decode(errors="replace"))
            self._arrived()
        if buffer:
            self._dispatch(buffer.decode(errors="replace"))

    def _end(self, status: int | None, stderr_tail: str) -> None:
        """The host's output is over: record how it ended and wake every waiter."""
        self.failure = HostExited(status, stderr_tail)
        if self.exit_code is None:
            self.exit_code = status
        self._pending.clear()
        self._streaming = False
        self._arrived()
        if self._ended is not None and not self._ended.done():
            self._ended.set_result(None)

    def _exited(self) -> HostExited:
        """A fresh :class:`HostExited` like :attr:`failure` (each raise gets its own traceback)."""
        assert self.failure is not None
        return HostExited(self.failure.status, self.failure.stderr_tail)

    EXIT_WAIT_S = 1.0
    """After the host's output ended, how long the client waits for its exit status."""

    async def _exit_details(self) -> tuple[int | None, str]:
        """The exit status (None if the process has not exited within :attr:`EXIT_WAIT_S`) and the
        last lines of its stderr."""
        assert self.proc is not None
        try:
            status: int | None = await asyncio.wait_for(asyncio.shield(self.proc.wait()), self.EXIT_WAIT_S)
        except TimeoutError:
            status = None
        if self._stderr_reader is not None:
            # Its last lines are written before it exits; a child holding the pipe must not stop us.
            await asyncio.wait({self._stderr_reader}, timeout=0.2)
            return status, _tail_text(bytes(self._stderr_tail))
        return status, _tail_text(_file_tail(self.stderr))

    STDERR_TAIL_BYTES = 8192
    """How much of the host's stderr the client keeps for :class:`HostExited`."""

    async def _copy_stderr(self) -> None:
        """Copy the host's stderr to ours as it comes, keeping its tail."""
        assert self.proc and self.proc.stderr
        tail = self._stderr_tail
        while chunk := await self.proc.stderr.read(1 << 16):
            tail += chunk
            del tail[: max(0, len(tail) - self.STDERR_TAIL_BYTES)]
            try:
                sys.stderr.write(chunk.decode(errors="replace"))
                sys.stderr.flush()
            except (OSError, ValueError):  # our own stderr is closed: the tail is still kept
                pass

    def _dispatch(self, line: str) -> None:
        self.lines.append(line)
        try:
            record = json.loads(line)
        except RecursionError:  # get_tree of a long session nests thousands of levels deep
            record = loads_deep(line)
        except ValueError:
            return
        if not isinstance(record, dict):
            return
        if record.get("type") == "response":
            self.responses.append(record)
            fut = self._pending.pop(str(record.get("id")), None)
            if fut is not None and not fut.done():
                fut.set_result(record)
            return
        self.events.append(record)
        kind = record.get("type")
        if kind == "agent_start":
            self._streaming = True
        elif kind == "agent_settled":
            self._streaming = False
            self._abandoned = 0
        elif kind == "extension_ui_request":
            self._ui_request(record)
        for listener in list(self._listeners):
            try:
                listener(record)
            except Exception as exc:  # a listener's bug must not stop the reader (and every waiter)
                asyncio.get_running_loop().call_exception_handler(
                    {"message": "RpcClient event listener failed", "exception": exc}
                )

    def _arrived(self) -> None:
        """Wake whoever waits for new records (:meth:`_until`)."""
        if self._arrival is not None and not self._arrival.done():
            self._arrival.set_result(None)
        self._arrival = None

    async def _until(self, target: asyncio.Future[Any] | None, deadline: float, what: str) -> Any:
        """Wait for ``target`` (a response future; None: the next records to arrive) until
        ``deadline`` (loop time). The one waiting primitive of this client: it raises
        :class:`HostExited` as soon as the host's output ends, and :class:`ClientTimeout` naming
        ``what`` once the deadline passes."""
        if self.failure is not None:
            raise self._exited()
        loop = asyncio.get_running_loop()
        if target is None:
            if self._arrival is None:
                self._arrival = loop.create_future()
            target = self._arrival
        assert self._ended is not None, "start() the client first"
        done, _ = await asyncio.wait(
            {target, self._ended}, timeout=max(0.0, deadline - loop.time()), return_when=asyncio.FIRST_COMPLETED
        )
        if target in done:
            return target.result()
        if self.failure is not None:
            raise self._exited()
        raise ClientTimeout(what)

    # --- raw access ---

    async def send_raw(self, data: bytes) -> None:
        """Write bytes as they are (tests use it for malformed input)."""
        assert self.proc and self.proc.stdin
        if self.failure is not None:
            raise self._exited()
        try:
            self.proc.stdin.write(data)
            await self.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:  # the host is gone: say how it ended
            if self._ended is not None:
                await asyncio.wait({self._ended}, timeout=self.EXIT_WAIT_S + 1)
            if self.failure is not None:
                raise self._exited() from exc
            raise

    def send_now(self, command: dict[str, Any]) -> bool:
        """Write a command at once, without waiting (usable where awaiting is not: a finaliser, a
        cancelled task); its response is recorded but nobody waits for it. False when the host is
        gone."""
        if self.proc is None or self.proc.stdin is None or self.proc.stdin.is_closing() or self.failure is not None:
            return False
        command = {**command, "id": command.get("id") or f"c{next(self._ids)}"}
        try:
            self.proc.stdin.write(json.dumps(command).encode() + b"\n")
        except (OSError, RuntimeError):
            return False
        return True

    async def request(self, command: dict[str, Any], timeout: float | None = 30) -> dict[str, Any]:
        """Send a command with a fresh id; return the whole response record (None timeout: no limit)."""
        req_id = command.get("id") or f"c{next(self._ids)}"
        command = {**command, "id": req_id}
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (timeout if timeout is not None else 1e9)
        fut: asyncio.Future[dict[str, Any]] = loop.create_future()
        self._pending[str(req_id)] = fut
        try:
            await self.send_raw(json.dumps(command).encode() + b"\n")
            what = f"no response to {command.get('type')!r} (id {req_id!r}) within {timeout}s"
            return await self._until(fut, deadline, what)
        finally:
            self._pending.pop(str(req_id), None)

    async def call(self, type_: str, timeout: float | None = 30, **fields: Any) -> Any:
        """Send a command and return its ``data``; raise :class:`RpcError` on failure."""
        if type_ in SESSION_CHANGING:
            self.session_id = None
        response = await self.request({"type": type_, **{k: v for k, v in fields.items() if v is not None}}, timeout)
        if not response.get("success"):
            raise RpcError(response)
        return response.get("data")

    # --- events ---

    def on_event(self, listener: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
        """Call ``listener`` with every event (the raw dict) from now on; returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def on_extension_ui_request(self, listener: Callable[[ExtensionUiRequest], None]) -> Callable[[], None]:
        """Call ``listener`` with every ``extension_ui_request`` (typed) from now on, answered or not
        by a handler; returns an unsubscribe function (the TypeScript ``onExtensionUIRequest``)."""

        def only_ui(event: dict[str, Any]) -> None:
            if event.get("type") == "extension_ui_request":
                listener(ExtensionUiRequest(event))

        return self.on_event(only_ui)

    async def wait_for_event(
        self, predicate: str | Callable[[dict[str, Any]], bool], *, after: int = 0, timeout: float = 30
    ) -> Event:
        """The first event (index >= ``after``) matching a type name or predicate, typed."""
        check = (lambda e: e.get("type") == predicate) if isinstance(predicate, str) else predicate
        deadline = asyncio.get_running_loop().time() + timeout
        index = after
        while True:
            while index < len(self.events):
                event = self.events[index]
                index += 1
                if check(event):
                    return parse_event(event)
            await self._until(None, deadline, f"no event matching {predicate!r} within {timeout}s")

    async def wait_for_idle(self, *, after: int = 0, timeout: float = 60) -> Event:
        """Wait for ``agent_settled`` (nothing automatic left: retries, queue) after event index ``after``."""
        return await self.wait_for_event("agent_settled", after=after, timeout=timeout)

    async def collect_events(self, *, after: int | None = None, timeout: float = 60) -> list[Event]:
        """The events from index ``after`` (default: from now) up to and including the next
        ``agent_settled``, typed (the TypeScript client's ``collectEvents``)."""
        start = len(self.events) if after is None else after
        await self.wait_for_idle(after=start, timeout=timeout)
        out: list[Event] = []
        for event in self.events[start:]:
            out.append(parse_event(event))
            if event.get("type") == "agent_settled":
                break
        return out

    # --- runs ---

    async def run(
        self,
        message: str,
        *,
        images: list[ImageContent] | None = None,
        timeout: float | None = 300,
        check: bool = False,
        abort_on_exit: bool | None = None,
        **fields: Any,
    ) -> RunResult:
        """Prompt, wait until the run settles and return it as a :class:`RunResult` (text, final
        message, usage, cost, duration, session id, stop reason, and its typed events). A timeout
        (:class:`ClientTimeout`) or a cancelled task aborts the run unless ``abort_on_exit=False``;
        ``check=True`` raises :class:`RunFailed` for a run that ended in error."""
        run = _Run(abort_on_exit)
        agen = self._run_events(message, images, timeout, fields, run)
        try:
            async for event in agen:
                run.events.append(event)
        finally:
            await agen.aclose()
        result = RunResult(run.events, disposition=run.disposition, duration_ms=run.duration_ms)
        if result.disposition == "started" and self.failure is None:
            result.session_id = await self._session()
        if check and result.disposition == "started" and not result.ok:
            raise RunFailed(result)
        return result

    async def prompt_and_wait(
        self, message: str, timeout: float | None = 60, *, check: bool = False, **fields: Any
    ) -> RunResult:
        """:meth:`run` with the TypeScript client's name and its 60 s default."""
        return await self.run(message, timeout=timeout, check=check, **fields)

    def stream(
        self,
        message: str,
        *,
        images: list[ImageContent] | None = None,
        timeout: float | None = 300,
        abort_on_exit: bool | None = None,
        **fields: Any,
    ) -> AsyncIterator[Event]:
        """``async for event in client.stream("…")``: the run's typed events as they arrive, ending
        with ``agent_settled`` (claude-agent-sdk's ``query()``). A prompt that starts no run (a
        handled command, a queued message) yields nothing.

        Leaving early (``break``, an exception, a timeout) aborts the run, unless
        ``abort_on_exit=False``: the abort is written the moment the stream is dropped, and the
        next prompt waits for the aborted run to settle."""
        run = _Run(abort_on_exit)
        agen = self._run_events(message, images, timeout, fields, run)
        if self.abort_on_exit if abort_on_exit is None else abort_on_exit:
            # ``break`` drops the generator before anything runs its ``finally``: a weak reference
            # sees it go at once, so the abort is on the wire before the caller's next command.
            def dropped(ref: weakref.ref[Any]) -> None:
                self._stream_refs.discard(ref)
                self._leave(run)

            self._stream_refs.add(weakref.ref(agen, dropped))
        return agen

    async def _run_events(
        self,
        message: str,
        images: list[ImageContent] | None,
        timeout: float | None,
        fields: dict[str, Any],
        run: _Run,
    ) -> AsyncIterator[Event]:
        """The one run loop behind :meth:`run` and :meth:`stream`."""
        queue: collections.deque[dict[str, Any]] = collections.deque()
        unsubscribe: Callable[[], None] | None = None
        try:
            await self._after_abandoned()  # before listening: the aborted run's last events are not ours
            unsubscribe = self.on_event(queue.append)
            started = time.monotonic()
            data = await self.prompt(message, images=images, **fields)
            run.disposition = data.get("disposition") if data else None
            if run.disposition == "handled":
                self.session_id = None  # a command may have switched sessions
            if run.disposition != "started":
                run.open = False
                return
            deadline = asyncio.get_running_loop().time() + (timeout if timeout is not None else 1e9)
            while True:
                while not queue:
                    await self._until(None, deadline, f"the run did not settle within {timeout}s")
                event = parse_event(queue.popleft())
                if event.get("type") == "agent_settled":
                    run.open = False
                    run.duration_ms = round((time.monotonic() - started) * 1000)
                    yield event
                    return
                yield event
        finally:
            if unsubscribe is not None:
                unsubscribe()
            self._leave(run)

    def _leave(self, run: _Run) -> None:
        """The caller stopped waiting for ``run``: if it has not settled (and the caller did not
        opt out), abort it now. No await: this runs in finalisers and cancelled tasks."""
        if not run.open:
            return
        run.open = False
        abort = self.abort_on_exit if run.abort_on_exit is None else run.abort_on_exit
        if abort and self.send_now({"type": "abort"}):
            self._abandoned += 1

    ABANDONED_SETTLE_S = 10.0
    """How long a new prompt waits for an aborted run to settle."""

    async def _after_abandoned(self) -> None:
        """Wait until a run left early has settled (its abort is answered at once; the run ends a
        moment later), so the next prompt does not find it still streaming."""
        if not (self._abandoned and self._streaming):
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.ABANDONED_SETTLE_S
        while self._abandoned and self._streaming:
            await self._until(None, deadline, "an aborted run did not settle")

    async def _session(self) -> str | None:
        if self.session_id is None:
            state = await self.get_state()
            self.session_id = state.session_id
        return self.session_id

    async def user_bash_with_updates(
        self,
        command: str,
        on_update: Callable[[str, str], None],
        exclude_from_context: bool | None = None,
        timeout: float | None = 300,
    ) -> BashResultData:
        """``user_bash`` with its output as it streams: ``on_update(delta, channel)`` (``stdout`` or
        ``stderr``) for each ``bash_execution_update`` of this request."""
        req_id = f"c{next(self._ids)}"

        def route(event: dict[str, Any]) -> None:
            if event.get("type") == "bash_execution_update" and event.get("id") == req_id:
                on_update(event.get("delta", ""), event.get("channel", "stdout"))

        unsubscribe = self.on_event(route)
        try:
            command_record = {"type": "user_bash", "id": req_id, "command": command}
            if exclude_from_context is not None:
                command_record["excludeFromContext"] = exclude_from_context
            response = await self.request(command_record, timeout)
        finally:
            unsubscribe()
        if not response.get("success"):
            raise RpcError(response)
        return BashResultData(response.get("data"))

    # --- dialogs ---

    def _ui_request(self, record: dict[str, Any]) -> None:
        """Route an ``extension_ui_request``: a login's request (its ``loginId``) to that login's
        handler, an approval to :attr:`can_use_tool`, anything else to :attr:`on_ui_request`."""
        login = record.get("loginId")
        if login in self._logins:
            handler = self._logins[login]
        elif self.can_use_tool is not None and approval_of(record) is not None:
            self._spawn(self._answer_approval(record))
            return
        else:
            handler = self.on_ui_request
        if handler is not None:
            self._spawn(self._answer_ui(handler, record))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer_approval(self, record: dict[str, Any]) -> None:
        request = approval_of(record)
        assert request is not None and self.can_use_tool is not None
        try:
            decision = self.can_use_tool(request.tool_name, request.args)
            if asyncio.iscoroutine(decision) or isinstance(decision, asyncio.Future):
                decision = await decision
        except Exception as exc:  # fail closed: the model is told, the host keeps serving
            answer = {"value": "Deny", "message": f"the client's can_use_tool failed: {type(exc).__name__}: {exc}"}
        else:
            answer = answer_of(decision)
        await self._answer(request.request_id, answer)

    async def _answer(self, request_id: str, answer: dict[str, Any]) -> None:
        """Send a dialog's answer; a host gone meanwhile is no error of the handler's."""
        try:
            await self.extension_ui_response(request_id, **answer)
        except (HostExited, BrokenPipeError, ConnectionResetError):
            pass

    async def _answer_ui(self, handler: UiHandler, record: dict[str, Any]) -> None:
        request = ExtensionUiRequest(record)
        method = record.get("method")
        asks = method in DIALOGS or method in OAUTH_ASKS
        try:
            value = handler(request)
            if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future):
                value = await value
        except Exception as exc:
            asyncio.get_running_loop().call_exception_handler(
                {"message": f"on_ui_request failed for {method}", "exception": exc}
            )
            value = None
        if asks:
            await self._answer(str(record.get("id")), _ui_answer(method, value))

    async def extension_ui_response(self, request_id: str, **answer: Any) -> None:
        """Answer an ``extension_ui_request`` (``value=``, ``confirmed=`` or ``cancelled=True``).

        The host sends no response for it, so this does not wait."""
        await self.send_raw(
            json.dumps({"type": "extension_ui_response", "id": request_id, **answer}).encode() + b"\n"
        )

    respond_extension_ui = extension_ui_response
    """The TypeScript client's name."""

    async def login_provider(
        self,
        provider: str,
        api_key: str | None = None,
        auth_type: str | None = None,
        login_id: str | None = None,
        timeout: float | None = None,
        *,
        on_ui: UiHandler | None = None,
    ) -> Any:
        """Sign in to ``provider``: with ``api_key``, or through the host's flow (OAuth in a
        browser, a device code, a pasted key). ``on_ui(request)`` answers that login's ``oauth_*``
        requests (its return value is the answer, as for :attr:`on_ui_request`); without it they go
        to :attr:`on_ui_request`. Cancelling the call (or its timeout) sends
        ``cancel_login_provider`` for this login."""
        login_id = login_id or f"login-{os.urandom(6).hex()}"
        self._logins[login_id] = on_ui or self.on_ui_request
        try:
            return await super().login_provider(provider, api_key, auth_type, login_id, timeout)
        except (asyncio.CancelledError, ClientTimeout):
            self.send_now({"type": "cancel_login_provider", "provider": provider, "loginId": login_id})
            raise
        finally:
            self._logins.pop(login_id, None)


class _Run:
    """What one run's loop shares with its caller."""

    __slots__ = ("abort_on_exit", "disposition", "duration_ms", "events", "open")

    def __init__(self, abort_on_exit: bool | None) -> None:
        self.abort_on_exit = abort_on_exit
        self.open = True
        """Not settled, and nobody has left it yet."""
        self.disposition: str | None = None
        self.duration_ms: int | None = None
        self.events: list[Event] = []


def _ui_answer(method: Any, value: Any) -> dict[str, Any]:
    """The ``extension_ui_response`` fields for a handler's return value: a dict as it is, a bool
    for ``confirm``, a string for the others; None cancels."""
    if isinstance(value, dict):
        return value
    if value is None:
        return {"cancelled": True}
    if method == "confirm":
        return {"confirmed": bool(value)}
    return {"value": str(value)}


def _file_tail(fd: int | None, size: int = RpcClient.STDERR_TAIL_BYTES) -> bytes:
    """The last ``size`` bytes of the regular file open on ``fd`` (a log given as ``stderr``), else b""."""
    if fd is None or fd < 0:
        return b""
    try:
        info = os.fstat(fd)
        return os.pread(fd, size, max(0, info.st_size - size)) if stat.S_ISREG(info.st_mode) else b""
    except OSError:
        return b""


def _tail_text(data: bytes, lines: int = 20) -> str:
    """The last ``lines`` complete lines of ``data`` as text."""
    text = data.decode(errors="replace")
    if len(data) >= RpcClient.STDERR_TAIL_BYTES and "\n" in text:
        text = text.split("\n", 1)[1]  # the first line was cut by the byte limit
    return "\n".join(text.rstrip("\n").split("\n")[-lines:]).strip("\n")
