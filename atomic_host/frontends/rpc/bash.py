"""The direct ``bash`` / ``user_bash`` RPC commands: streamed deltas, per-request abort, and the
BashExecutionMessage recorded in the session that started the request."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from atomic_host.contract.events import UserBashEvent

if TYPE_CHECKING:
    from atomic_host.runtime import Runtime

_running: dict[Any, asyncio.Event] = {}
"""Abort signals of running requests, keyed by request id (or a private key when id is absent)."""


async def run_bash_command(rt: Runtime, cmd: dict[str, Any]) -> dict[str, Any]:
    from atomic_host.kit.shell import run_shell

    agent = rt.require_session()  # ownership: the session active when the request started
    req_id = cmd.get("id")
    command: str = cmd["command"]
    for _plugin, result in await rt.plugins.acall_each(
        "user_bash", event=UserBashEvent(command), api=rt.api
    ):
        if isinstance(result, dict) and "output" in result:
            return result
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
    try:
        result = await run_shell(
            f"{prefix}\n{command}" if prefix else command,
            agent.cwd,
            on_chunk=on_chunk,
            signal=signal,
            session_id=agent.session.id,
            shell=rt.settings.str("shellPath") or "bash",
            temp_dir=agent.temp_dir,
        )
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
    return data


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
