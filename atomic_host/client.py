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
import itertools
import json
import os
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


class RunFailed(Exception):
    """``prompt_and_wait(..., check=True)`` for a run that ended in error."""

    def __init__(self, result: RunResult) -> None:
        super().__init__(result.error or "the run produced no reply")
        self.result = result


class RpcError(Exception):
    """A ``success:false`` response."""

    def __init__(self, response: dict[str, Any]) -> None:
        super().__init__(response.get("error", "unknown error"))
        self.response = response


class RpcClient:
    """Drives one host subprocess over JSONL."""

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
        """The host's exit status once it has exited (after ``close()`` / ``async with``)."""
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._listeners: list[Callable[[dict[str, Any]], None]] = []
        self._changed = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None

    # --- lifecycle ---

    async def start(self) -> RpcClient:
        env = dict(os.environ if self.env is None else self.env)
        self.proc = await asyncio.create_subprocess_exec(
            *self.command,
            *self.args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self.stderr,
            cwd=self.cwd,
            env=env,
        )
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
        self.exit_code = self.proc.returncode
        return self.exit_code

    async def _read(self) -> None:
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
                self._dispatch(raw.decode())
        if buffer:
            self._dispatch(buffer.decode())
        for fut in self._pending.values():
            if not fut.done():
                fut.set_exception(ConnectionError("host exited"))

    def _dispatch(self, line: str) -> None:
        self.lines.append(line)
        try:
            record = json.loads(line)
        except RecursionError:  # get_tree of a long session nests thousands of levels deep
            record = loads_deep(line)
        except ValueError:
            return
        if record.get("type") == "response":
            self.responses.append(record)
            fut = self._pending.pop(str(record.get("id")), None)
            if fut is not None and not fut.done():
                fut.set_result(record)
        else:
            self.events.append(record)
            for listener in self._listeners:
                listener(record)
        self._changed.set()

    # --- raw access ---

    async def send_raw(self, data: bytes) -> None:
        """Write bytes as they are (tests use it for malformed input)."""
        assert self.proc and self.proc.stdin
        self.proc.stdin.write(data)
        await self.proc.stdin.drain()

    async def request(self, command: dict[str, Any], timeout: float = 30) -> dict[str, Any]:
        """Send a command with a fresh id; return the whole response record."""
        req_id = command.get("id") or f"c{next(self._ids)}"
        command = {**command, "id": req_id}
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[str(req_id)] = fut
        await self.send_raw(json.dumps(command).encode() + b"\n")
        return await asyncio.wait_for(fut, timeout)

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
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        index = after
        while True:
            while index < len(self.events):
                event = self.events[index]
                index += 1
                if check(event):
                    return event
            if (
                self.proc is not None
                and self.proc.returncode is not None
                and self._reader
                and self._reader.done()
            ):
                raise ConnectionError("host exited while waiting for an event")
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"no event matching {predicate!r} within {timeout}s")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                pass

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
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        unsubscribe = self.on_event(queue.put_nowait)
        try:
            data = await self.prompt(message, **fields)
            if not (data and data.get("disposition") == "started"):
                return
            loop = asyncio.get_running_loop()
            deadline = loop.time() + timeout
            while True:
                event = await asyncio.wait_for(queue.get(), max(0.0, deadline - loop.time()))
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
