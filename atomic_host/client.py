"""An asyncio client for ``atomic --mode rpc``: starts the host subprocess, one method per command.

    async with RpcClient(["--provider", "faux"]) as client:
        await client.prompt("hello")
        await client.wait_for_idle()
        print(await client.get_last_assistant_text())

Method names follow the TypeScript ``RpcClient`` in snake_case. Each returns the response
``data`` and raises :class:`RpcError` on ``success:false``. Events are kept in ``client.events``
and can be awaited with :meth:`wait_for_event` or observed with :meth:`on_event`.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import os
import signal
import stat
import sys
import threading
from collections.abc import Callable
from typing import Any

DEEP_STACK_BYTES = 512 * 1024 * 1024
"""Stack of the thread that parses a deeply nested line (address space, committed only as used)."""


def loads_deep(line: str) -> Any:
    """``json.loads`` for records nested deeper than the recursion limit, such as the ``get_tree``
    of a 20,000-turn session.

    The C scanner recurses once per level: a raised recursion limit lets it go deeper, and a thread
    with a big stack gives it the room (on the main thread's 8 MB it crashed the process at ~40,000
    levels)."""
    try:
        return json.loads(line)
    except RecursionError:
        pass
    outcome: list[Any] = []

    def parse() -> None:
        try:
            outcome.append((True, json.loads(line)))
        except BaseException as exc:  # handed to the caller's thread
            outcome.append((False, exc))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * line.count("{") + 4 * line.count("[") + 1000))
    previous = threading.stack_size(DEEP_STACK_BYTES)
    try:
        worker = threading.Thread(target=parse, name="atomic-deep-json")
        worker.start()
    finally:
        threading.stack_size(previous)
    try:
        worker.join()
    finally:
        sys.setrecursionlimit(limit)
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


class EventLog:
    """The records a client keeps: append-only, indexed by arrival number, holding at most the
    newest ``limit`` (a long session's millions of deltas must not grow memory without bound).

    ``len()`` counts every record ever received, so ``start = len(log)`` ... ``log[start:]`` keeps
    working as a cursor however many were dropped; indexing a dropped record raises IndexError,
    and a slice gives the retained part of its range.
    """

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self._items: list[Any] = []
        self._dropped = 0  # records discarded from the front

    def append(self, item: Any) -> None:
        self._items.append(item)
        if self.limit is not None and len(self._items) > self.limit + self.limit // 4:
            cut = len(self._items) - self.limit  # drop in batches: amortised O(1) per append
            del self._items[:cut]
            self._dropped += cut

    def __len__(self) -> int:
        return self._dropped + len(self._items)

    def clear(self) -> None:
        """Drop every retained record (the count, and so every cursor, stays)."""
        self._dropped += len(self._items)
        self._items.clear()

    def __delitem__(self, key: slice) -> None:
        if key != slice(None):
            raise TypeError("only `del log[:]` (clear) is supported")
        self.clear()

    def index(self, item: Any) -> int:
        """The arrival number of a retained record (identity or equality, like list.index)."""
        return self._dropped + self._items.index(item)

    def __iter__(self) -> Any:
        return iter(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def __getitem__(self, key: int | slice) -> Any:
        total = len(self)
        if isinstance(key, slice):
            start, stop, step = key.indices(total)
            start, stop = max(start - self._dropped, 0), max(stop - self._dropped, 0)
            return self._items[start:stop:step]
        index = key + total if key < 0 else key
        if not self._dropped <= index < total:
            raise IndexError(f"record {key} is not retained (dropped {self._dropped} of {total})")
        return self._items[index - self._dropped]

    def __eq__(self, other: object) -> bool:
        return list(self._items) == other if isinstance(other, list) else NotImplemented

    def __repr__(self) -> str:
        return f"EventLog({len(self)} records, {len(self._items)} retained)"


class RunResult(list):  # type: ignore[type-arg]
    """The events of one prompt (a list, as before) and what they add up to."""

    @property
    def final_message(self) -> dict[str, Any] | None:
        """The last assistant message of the run (``message_end``), if any."""
        for event in reversed(self):
            message = event.get("message") if event.get("type") == "message_end" else None
            if isinstance(message, dict) and message.get("role") == "assistant":
                return message
        return None

    @property
    def error(self) -> str | None:
        """The error the run ended with (provider error, abort), else None."""
        message = self.final_message
        if message is None or message.get("stopReason") not in ("error", "aborted"):
            return None
        return str(message.get("errorMessage") or message.get("stopReason"))

    @property
    def ok(self) -> bool:
        return self.final_message is not None and self.error is None

    @property
    def text(self) -> str:
        """The final assistant message's text."""
        message = self.final_message or {}
        return "".join(b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text")


class ClientError(Exception):
    """Base of every error this client raises about the host and its answers."""


class RunFailed(ClientError):
    """``prompt_and_wait(..., check=True)`` for a run that ended in error."""

    def __init__(self, result: RunResult) -> None:
        super().__init__(result.error or "the run produced no reply")
        self.result = result


class RpcError(ClientError):
    """A ``success:false`` response."""

    def __init__(self, response: dict[str, Any]) -> None:
        super().__init__(response.get("error", "unknown error"))
        self.response = response


class HostExited(ClientError, ConnectionError):
    """The host's output ended (it exited, was killed, or closed stdout) while something waited for it.

    Raised at once, to every waiter (a request, ``wait_for_event``, ``stream``, ``prompt_and_wait``)
    and by every call made after it. ``status`` is the exit status as ``Popen.returncode`` gives it
    (negative: killed by that signal; None: the process had not exited a moment after closing its
    output); ``stderr_tail`` is the end of what the host wrote on stderr, when the client could read
    it (see :class:`RpcClient`'s ``stderr``)."""

    def __init__(self, status: int | None, stderr_tail: str = "") -> None:
        self.status = status
        self.stderr_tail = stderr_tail
        super().__init__(_exit_text(status) + (f"; its stderr ended with:\n{stderr_tail}" if stderr_tail else ""))


class ClientTimeout(ClientError, TimeoutError):
    """Nothing the caller waited for arrived within its timeout (the host is still running)."""


def _exit_text(status: int | None) -> str:
    if status is None:
        return "the host closed its output (still running)"
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"the host was killed by {name} (status {status})"
    return f"the host exited with status {status}"


class RpcClient:
    """Drives one host subprocess over JSONL.

    ``stderr`` is where the host's diagnostics go. By default the client reads them through a pipe
    and copies them to its own ``sys.stderr``, keeping the last few kilobytes for
    :class:`HostExited`; a file descriptor of a regular file (a log) is read back at the end for
    the same purpose; anything else (``DEVNULL``, a terminal, ``PIPE`` read by the caller) gives
    errors without a stderr tail."""

    def __init__(
        self,
        args: list[str] | None = None,
        *,
        command: list[str] | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        stderr: int | None = None,
        max_records: int | None = 200_000,
    ) -> None:
        self.command = command or [sys.executable, "-m", "atomic_host", "--mode", "rpc"]
        self.args = args or []
        self.cwd = cwd
        self.env = env
        self.stderr = stderr
        self.proc: asyncio.subprocess.Process | None = None
        self.events: EventLog = EventLog(max_records)
        self.responses: EventLog = EventLog(max_records)
        self.lines: EventLog = EventLog(max_records)
        """Every stdout line, verbatim (tests check that nothing but JSON is printed); the newest
        ``max_records`` of each kind are kept (None: all)."""
        self.exit_code: int | None = None
        """The host's exit status once it has exited (after ``close()`` / ``async with``, or once
        its output ended)."""
        self.failure: HostExited | None = None
        """Set when the host's output ended: what every waiter is told from then on."""
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

    # --- lifecycle ---

    async def start(self) -> RpcClient:
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
        """Close stdin (the host exits 0) and wait for the process."""
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
        else:
            self.events.append(record)
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

    async def request(self, command: dict[str, Any], timeout: float = 30) -> dict[str, Any]:
        """Send a command with a fresh id; return the whole response record."""
        req_id = command.get("id") or f"c{next(self._ids)}"
        command = {**command, "id": req_id}
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        fut: asyncio.Future[dict[str, Any]] = loop.create_future()
        self._pending[str(req_id)] = fut
        try:
            await self.send_raw(json.dumps(command).encode() + b"\n")
            what = f"no response to {command.get('type')!r} (id {req_id!r}) within {timeout}s"
            return await self._until(fut, deadline, what)
        finally:
            self._pending.pop(str(req_id), None)

    async def call(self, type_: str, timeout: float = 30, **fields: Any) -> Any:
        """Send a command and return its ``data``; raise :class:`RpcError` on failure."""
        response = await self.request(
            {"type": type_, **{k: v for k, v in fields.items() if v is not None}}, timeout
        )
        if not response.get("success"):
            raise RpcError(response)
        return response.get("data")

    # --- events ---

    def on_event(self, listener: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
        """Call ``listener`` for every event from now on; returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    async def wait_for_event(
        self, predicate: str | Callable[[dict[str, Any]], bool], *, after: int = 0, timeout: float = 30
    ) -> dict[str, Any]:
        """The first event (index >= ``after``) matching a type name or predicate."""
        check = (lambda e: e.get("type") == predicate) if isinstance(predicate, str) else predicate
        deadline = asyncio.get_running_loop().time() + timeout
        index = after
        while True:
            while index < len(self.events):
                event = self.events[index]
                index += 1
                if check(event):
                    return event
            await self._until(None, deadline, f"no event matching {predicate!r} within {timeout}s")

    async def wait_for_idle(self, *, after: int = 0, timeout: float = 60) -> dict[str, Any]:
        """Wait for ``agent_settled`` (nothing automatic left: retries, queue) after event index ``after``."""
        return await self.wait_for_event("agent_settled", after=after, timeout=timeout)

    async def prompt_and_wait(
        self, message: str, timeout: float = 60, *, check: bool = False, **fields: Any
    ) -> RunResult:
        """Prompt, wait until settled, return the events of that run as a :class:`RunResult`
        (``.ok``, ``.error``, ``.text``); with ``check=True`` a run that ended in error raises
        :class:`RunFailed`."""
        start = len(self.events)
        data = await self.prompt(message, **fields)
        if data and data.get("disposition") == "started":
            await self.wait_for_idle(after=start, timeout=timeout)
        result = RunResult(self.events[start:])
        if check and data and data.get("disposition") == "started" and not result.ok:
            raise RunFailed(result)
        return result

    async def stream(self, message: str, timeout: float = 300, **fields: Any) -> Any:
        """``async for event in client.stream("…")``: the run's events as they arrive, ending
        with ``agent_settled`` (like ``claude-agent-sdk``'s ``query()``). A prompt that does not
        start a run (a handled command, a queued message) yields nothing."""
        queue: collections.deque[dict[str, Any]] = collections.deque()
        unsubscribe = self.on_event(queue.append)
        try:
            data = await self.prompt(message, **fields)
            if not (data and data.get("disposition") == "started"):
                return
            deadline = asyncio.get_running_loop().time() + timeout
            while True:
                while not queue:
                    await self._until(None, deadline, f"the run did not settle within {timeout}s")
                event = queue.popleft()
                yield event
                if event.get("type") == "agent_settled":
                    return
        finally:
            unsubscribe()

    # --- commands (TypeScript RpcClient names in snake_case) ---

    async def prompt(
        self, message: str, images: list[dict[str, Any]] | None = None, streaming_behavior: str | None = None
    ) -> Any:
        return await self.call("prompt", message=message, images=images, streamingBehavior=streaming_behavior)

    async def steer(self, message: str, images: list[dict[str, Any]] | None = None) -> Any:
        return await self.call("steer", message=message, images=images)

    async def follow_up(self, message: str, images: list[dict[str, Any]] | None = None) -> Any:
        return await self.call("follow_up", message=message, images=images)

    async def abort(self) -> Any:
        return await self.call("abort")

    async def clear_queue(self) -> Any:
        return await self.call("clear_queue")

    async def pause_queued_messages(self) -> Any:
        return await self.call("pause_queued_messages")

    async def resume_queued_messages(self) -> Any:
        return await self.call("resume_queued_messages")

    async def new_session(self, parent_session: str | None = None) -> Any:
        return await self.call("new_session", parentSession=parent_session)

    async def delete_session(self, session_id: str) -> Any:
        return await self.call("delete_session", sessionId=session_id)

    async def get_state(self) -> Any:
        return await self.call("get_state")

    async def get_messages(self) -> list[dict[str, Any]]:
        return (await self.call("get_messages"))["messages"]

    async def set_model(self, provider: str, model_id: str, persist: bool | None = None) -> Any:
        return await self.call("set_model", provider=provider, modelId=model_id, persist=persist)

    async def cycle_model(self, direction: str | None = None, persist: bool | None = None) -> Any:
        return await self.call("cycle_model", direction=direction, persist=persist)

    async def get_available_models(self) -> list[dict[str, Any]]:
        return (await self.call("get_available_models"))["models"]

    async def refresh_models(
        self, *, timeout_ms: int | None = None, force: bool | None = None, allow_network: bool | None = None
    ) -> Any:
        """The catalog after a refresh, with ``aborted`` and ``errors`` (docs/models.md)."""
        return await self.call("refresh_models", timeoutMs=timeout_ms, force=force, allowNetwork=allow_network)

    async def logout_provider(self, provider: str) -> Any:
        return await self.call("logout_provider", provider=provider)

    async def login_provider(self, provider: str, api_key: str) -> Any:
        return await self.call("login_provider", provider=provider, apiKey=api_key)

    async def set_thinking_level(self, level: str, persist: bool | None = None) -> Any:
        return await self.call("set_thinking_level", level=level, persist=persist)

    async def cycle_thinking_level(self) -> Any:
        return await self.call("cycle_thinking_level")

    async def get_available_thinking_levels(self) -> list[str]:
        return (await self.call("get_available_thinking_levels"))["levels"]

    async def set_steering_mode(self, mode: str) -> Any:
        return await self.call("set_steering_mode", mode=mode)

    async def set_follow_up_mode(self, mode: str) -> Any:
        return await self.call("set_follow_up_mode", mode=mode)

    async def compact(self) -> Any:
        return await self.call("compact", timeout=300)

    async def abort_compaction(self) -> Any:
        return await self.call("abort_compaction")

    async def set_auto_compaction(self, enabled: bool) -> Any:
        return await self.call("set_auto_compaction", enabled=enabled)

    async def set_auto_retry(self, enabled: bool) -> Any:
        return await self.call("set_auto_retry", enabled=enabled)

    async def abort_retry(self) -> Any:
        return await self.call("abort_retry")

    async def bash(self, command: str, exclude_from_context: bool | None = None, timeout: float = 300) -> Any:
        return await self.call(
            "bash", timeout=timeout, command=command, excludeFromContext=exclude_from_context
        )

    async def user_bash(self, command: str, timeout: float = 300) -> Any:
        return await self.call("user_bash", timeout=timeout, command=command)

    async def abort_bash(self, request_id: str | None = None) -> Any:
        return await self.call("abort_bash", requestId=request_id)

    async def get_session_stats(self) -> Any:
        return await self.call("get_session_stats")

    async def get_tools(self) -> Any:
        return await self.call("get_tools")

    async def export_html(self, output_path: str | None = None) -> Any:
        return await self.call("export_html", outputPath=output_path)

    async def switch_session(
        self, session_id: str, session_directory: str | None = None, cwd_override: str | None = None
    ) -> Any:
        return await self.call(
            "switch_session",
            sessionId=session_id,
            sessionDirectory=session_directory,
            cwdOverride=cwd_override,
        )

    async def import_session(self, input_path: str, cwd_override: str | None = None) -> Any:
        return await self.call("import_session", inputPath=input_path, cwdOverride=cwd_override)

    async def start_pending_recovery(self, reason: str | None = None) -> Any:
        return await self.call("start_pending_recovery", reason=reason)

    async def fork(self, entry_id: str) -> Any:
        return await self.call("fork", entryId=entry_id)

    async def clone(self) -> Any:
        return await self.call("clone")

    async def get_fork_messages(self) -> list[dict[str, Any]]:
        return (await self.call("get_fork_messages"))["messages"]

    async def get_entries(self, since: str | None = None) -> Any:
        return await self.call("get_entries", since=since)

    async def get_tree(self) -> Any:
        return await self.call("get_tree")

    async def navigate_tree(self, target_id: str, options: dict[str, Any] | None = None) -> Any:
        return await self.call("navigate_tree", targetId=target_id, options=options)

    async def set_label(self, entry_id: str, label: str | None = None) -> Any:
        return await self.call("set_label", entryId=entry_id, label=label)

    async def get_last_assistant_text(self) -> str | None:
        return (await self.call("get_last_assistant_text"))["text"]

    async def set_session_name(self, name: str) -> Any:
        return await self.call("set_session_name", name=name)

    async def get_commands(self) -> list[dict[str, Any]]:
        return (await self.call("get_commands"))["commands"]

    async def get_command_completions(self, command_name: str, argument_prefix: str = "") -> Any:
        return await self.call(
            "get_command_completions", commandName=command_name, argumentPrefix=argument_prefix
        )

    async def get_session_summary(self) -> Any:
        return await self.call("get_session_summary")

    async def list_sessions(self) -> list[dict[str, Any]]:
        return (await self.call("list_sessions"))["sessions"]

    async def list_workflow_runs(self, status: str | None = None) -> list[dict[str, Any]]:
        return (await self.call("list_workflow_runs", status=status))["runs"]

    async def get_workflow_run_summary(self, run_id: str) -> Any:
        return await self.call("get_workflow_run_summary", runId=run_id)

    async def extension_ui_response(self, request_id: str, **answer: Any) -> None:
        """Answer an ``extension_ui_request`` (``value=``, ``confirmed=`` or ``cancelled=True``).

        The host sends no response for it, so this does not wait."""
        await self.send_raw(
            json.dumps({"type": "extension_ui_response", "id": request_id, **answer}).encode() + b"\n"
        )


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
