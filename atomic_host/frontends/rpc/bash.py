"""The direct ``bash`` / ``user_bash`` RPC commands: streamed deltas, per-request abort, and the
BashExecutionMessage recorded in the session that started the request.

The ``user_bash`` hook is asked first (through ``rt.hooks``): a ``BashResult`` answers the command
without running it; ``BashResult(operations=...)`` runs it through the plugin's
:class:`~atomic_host.contract.results.BashOperations` (:func:`run_operations`) instead of the local
shell, with the same deltas, truncation, full-output log, abort and response.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_host.contract.errors import HostError
from atomic_host.contract.events import UserBashEvent
from atomic_host.kit.log import log
from atomic_host.kit.tempdirs import session_temp_dir
from atomic_host.kit.tool_env import pass_through

if TYPE_CHECKING:
    from atomic_host.contract.results import BashOperations, BashResult
    from atomic_host.kit.shell import ShellResult
    from atomic_host.runtime import Runtime

_running: dict[Any, asyncio.Event] = {}
"""Abort signals of running requests, keyed by request id (or a private key when id is absent)."""

CHANNELS = ("stdout", "stderr")


class OperationsFailed(Exception):
    """``BashOperations.exec`` raised (not after an abort): the command fails with this."""


async def run_bash_command(rt: Runtime, cmd: dict[str, Any]) -> dict[str, Any]:
    agent = rt.require_session()  # ownership: the session active when the request started
    req_id = cmd.get("id")
    command: str = cmd["command"]
    operations: BashOperations | None = None
    if rt.hooks.has_impls("user_bash"):
        answer: BashResult | None = await rt.hooks.acall("user_bash", event=UserBashEvent(command))
        if answer is not None and answer.operations is None:
            data = _answered(answer)
            _record(agent, cmd, command, data)
            return data
        operations = answer.operations if answer is not None else None
    signal = asyncio.Event()
    key = req_id if req_id is not None else object()
    _running[key] = signal
    out = rt.out

    def on_chunk(channel: str, delta: str) -> None:
        event: dict[str, Any] = {"type": "bash_execution_update", "channel": channel, "delta": delta}
        if req_id is not None:
            event = {"type": "bash_execution_update", "id": req_id, "channel": channel, "delta": delta}
        out.send(event)

    prefix = rt.settings.str("shellCommandPrefix")
    full_command = f"{prefix}\n{command}" if prefix else command
    try:
        if operations is None:
            from atomic_host.kit.shell import run_shell  # import-time cost: only once a command runs

            result = await run_shell(
                full_command,
                agent.cwd,
                on_chunk=on_chunk,
                signal=signal,
                session_id=agent.session.id,
                shell=rt.settings.str("shellPath") or "bash",
                keep_env=pass_through(rt.settings.get("shellEnv")),
                temp_dir=agent.temp_dir,
            )
        else:
            result = await run_operations(
                operations,
                full_command,
                agent.cwd,
                on_chunk=on_chunk,
                signal=signal,
                session_id=agent.session.id,
                temp_dir=agent.temp_dir,
            )
    except OperationsFailed as exc:
        cause = exc.__cause__ or exc
        owner = _owner_path(rt, operations)
        detail = f"{type(cause).__name__}: {cause}"
        log.warning(f"{owner} raised in user_bash operations: {detail}")
        rt.plugins.on_error(owner, "user_bash", f"operations.exec raised {detail}")
        raise HostError(f"Bash command failed: user_bash operations raised {detail}") from None
    finally:
        _running.pop(key, None)
    data: dict[str, Any] = {
        "output": result.output,
        "cancelled": result.cancelled,
        "truncated": result.truncated,
    }
    if result.exit_code is not None and not result.cancelled:
        data = {
            "output": result.output,
            "exitCode": result.exit_code,
            "cancelled": False,
            "truncated": result.truncated,
        }
    if result.full_output_path or result.truncated:
        data["fullOutputPath"] = result.full_output_path
    _record(agent, cmd, command, data)
    return data


def _answered(answer: BashResult) -> dict[str, Any]:
    """The response ``data`` of a command a plugin answered (no ``exitCode`` when cancelled)."""
    data: dict[str, Any] = {"output": answer.output}
    if answer.exit_code is not None and not answer.cancelled:
        data["exitCode"] = answer.exit_code
    data["cancelled"] = answer.cancelled
    data["truncated"] = answer.truncated
    return data


def _record(agent: Any, cmd: dict[str, Any], command: str, data: dict[str, Any]) -> None:
    """Record the BashExecutionMessage in the session that started the request."""
    message: dict[str, Any] = {
        "role": "bashExecution",
        "command": command,
        **data,
        "timestamp": int(time.time() * 1000),
    }
    message.setdefault("fullOutputPath", None)
    if cmd.get("excludeFromContext"):
        message["excludeFromContext"] = True
    agent.add_bash_message(message)


def _owner_path(rt: Runtime, operations: Any) -> str:
    """The ``extensionPath`` of the plugin whose module defines ``operations`` (or its module name)."""
    modules = {
        getattr(type(operations), "__module__", None),
        getattr(getattr(operations, "exec", None), "__module__", None),
    }
    for record in rt.plugins.records.values():
        if record.module is not None and record.module.__name__ in modules:
            return record.path
    return next((m for m in modules if m), "user_bash")


async def run_operations(
    operations: BashOperations,
    command: str,
    cwd: str,
    *,
    on_chunk: Callable[[str, str], None] | None = None,
    signal: asyncio.Event,
    session_id: str,
    temp_dir: Callable[[], Path | str | None] | None = None,
    grace: float | None = None,
) -> ShellResult:
    """Run ``command`` through ``operations.exec`` with the local shell's output handling.

    What ``on_data`` gets is decoded, cleaned and masked per channel (as :func:`run_shell` does
    with its pipes), passed to ``on_chunk(channel, delta)`` and kept in a bounded tail with the
    full-output log. When ``signal`` is set the result is ``cancelled`` (no exit code) and ``exec``
    has ``grace`` seconds (default: the local shell's kill grace, 1 s) to return before its task is
    cancelled. Raises :class:`OperationsFailed`
    (with the exception as ``__cause__``) when ``exec`` raised without an abort.
    """
    # import-time cost: kit.shell loads subprocess and friends, only once a command runs
    from atomic_host.kit.shell import KILL_GRACE_SECONDS, ShellOutput

    grace = KILL_GRACE_SECONDS if grace is None else grace
    out = ShellOutput(temp_dir or (lambda: session_temp_dir(session_id)), on_chunk)
    loop = asyncio.get_running_loop()
    loop_thread = threading.get_ident()
    finished = False

    def feed(data: Any, channel: str) -> None:
        if finished:
            return  # output after the command ended is not part of it
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogatepass")  # cleaned like pipe bytes; bad text becomes U+FFFD
        elif not isinstance(data, bytes):
            data = bytes(data)
        out.feed(channel if channel in CHANNELS else "stdout", data)

    def on_data(data: Any, channel: str = "stdout") -> None:
        if threading.get_ident() == loop_thread:
            feed(data, channel)
        else:
            with contextlib.suppress(RuntimeError):  # the loop is gone (host exiting)
                loop.call_soon_threadsafe(feed, data, channel)

    async def call() -> Any:
        result = operations.exec(command, cwd, on_data=on_data, signal=signal)
        return await result if inspect.isawaitable(result) else result

    work = asyncio.ensure_future(call())
    abort = asyncio.ensure_future(signal.wait())
    cancelled = False
    try:
        await asyncio.wait({work, abort}, return_when=asyncio.FIRST_COMPLETED)
        if not work.done():
            cancelled = True
            await asyncio.wait({work}, timeout=grace)
            if not work.done():
                work.cancel()
                await asyncio.wait({work}, timeout=grace)
        await asyncio.sleep(0)  # output a worker thread handed over just before exec returned
    except BaseException:
        work.cancel()  # this command itself was cancelled (host leaving): stop the runner too
        raise
    finally:
        abort.cancel()
    code: Any = None
    if work.done() and not work.cancelled():
        error = work.exception()
        if error is not None and not cancelled:
            raise OperationsFailed(str(error)) from error
        code = None if error is not None else work.result()
    for channel in CHANNELS:
        out.end(channel)
    finished = True
    exit_code = code if isinstance(code, int) and not isinstance(code, bool) and not cancelled else None
    return out.result(exit_code, cancelled=cancelled, timed_out=False)


def abort_bash(_rt: Runtime, request_id: Any = None) -> None:
    """Cancel one request by id, or every running one."""
    if request_id is None:
        for signal in _running.values():
            signal.set()
    elif request_id in _running:
        _running[request_id].set()


async def drain(timeout: float = 5.0) -> None:
    """stdin closed: cancel every owned request and wait for them to finish."""
    abort_bash(None)  # type: ignore[arg-type]
    deadline = time.monotonic() + timeout
    while _running and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
