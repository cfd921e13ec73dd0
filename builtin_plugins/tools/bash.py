"""bash: run a shell command, stream its output, keep the tail; or start it in the background."""

from __future__ import annotations

import asyncio
import math
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from atomic_host.contract.tools import ToolContext, ToolError, ToolResult

DEFAULT_TIMEOUT = 300
MAX_TIMEOUT = 3600
UPDATE_INTERVAL = 0.05


class Params(BaseModel):
    command: str = Field(description="Bash command to run")
    timeout: float | None = Field(None, description="Timeout in seconds (default 300, must be > 0 and <= 3600)")
    cwd: str | None = Field(None, description="Directory to run in, relative to the working directory")
    env: dict[str, str] | None = Field(None, description="Extra environment variables")
    background: bool = Field(False, description="Start as a long-running background process and return at once")


def _temp_dir(ctx: ToolContext) -> Path | None:
    from atomic_host.kit.tempdirs import session_temp_dir

    d = ctx.temp_dir()
    return Path(d) if d else session_temp_dir(ctx.session_id)


def _shell_and_command(command: str, ctx: ToolContext) -> tuple[str, str]:
    prefix = ctx.settings.get("shellCommandPrefix")
    if isinstance(prefix, str) and prefix:
        command = f"{prefix}\n{command}"
    shell = ctx.settings.get("shellPath")
    return (shell if isinstance(shell, str) and shell else "bash"), command


def _timeout(value: float | None) -> int:
    if value is None:
        return DEFAULT_TIMEOUT
    if not math.isfinite(value) or value <= 0 or value > MAX_TIMEOUT:
        raise ToolError(f"timeout must be greater than 0 and at most {MAX_TIMEOUT} seconds (got {value:g})")
    return max(1, math.floor(value))


async def run(params: Params, ctx: ToolContext) -> ToolResult:
    from atomic_host.kit.shell import OutputTail, run_shell
    from atomic_host.kit.tool_env import pass_through
    from builtin_plugins.tools._common import resolve_path

    if not params.command.strip():
        raise ToolError("command must not be empty")
    timeout = _timeout(params.timeout)
    cwd = resolve_path(params.cwd, ctx.cwd) if params.cwd else Path(ctx.cwd)
    if not cwd.is_dir():
        raise ToolError(f"Working directory does not exist: {cwd}")
    shell, command = _shell_and_command(params.command, ctx)
    if params.background:
        return _start_background(params, ctx, shell, command, cwd)

    live = OutputTail(None)
    loop = asyncio.get_running_loop()
    last_emit = 0.0
    pending: asyncio.TimerHandle | None = None

    def emit() -> None:
        nonlocal last_emit, pending
        pending = None
        last_emit = loop.time()
        snap = live.snapshot()
        ctx.on_update(
            ToolResult.text(
                snap.content,
                {"truncation": snap.to_details() if snap.truncated else None, "fullOutputPath": None},
            )
        )

    def on_chunk(_channel: str, text: str) -> None:
        nonlocal pending
        live.append(text)
        wait = UPDATE_INTERVAL - (loop.time() - last_emit)
        if wait <= 0 and pending is None:
            emit()
        elif pending is None:
            pending = loop.call_later(max(wait, 0), emit)

    started = time.monotonic()
    try:
        result = await run_shell(
            command,
            str(cwd),
            on_chunk=on_chunk,
            signal=ctx.signal,
            timeout=timeout,
            session_id=ctx.session_id,
            shell=shell,
            env=params.env,
            keep_env=pass_through(ctx.settings.get("shellEnv")),
            temp_dir=lambda: _temp_dir(ctx),
        )
    except OSError as e:
        raise ToolError(f"Cannot run command: {e}") from e
    finally:
        if pending is not None:
            pending.cancel()
    wall_ms = int((time.monotonic() - started) * 1000)
    tr = result.truncation
    notes: list[str] = []
    if result.truncated and tr is not None:
        where = f" Full output: {result.full_output_path}" if result.full_output_path else ""
        notes.append(f"[Showing lines {tr.first_line}-{tr.last_line} of {tr.total_lines}.{where}]")
    details: dict[str, Any] = {
        "truncation": tr.to_details() if tr is not None and tr.truncated else None,
        "fullOutputPath": result.full_output_path,
        "timeoutSeconds": timeout,
        "wallTimeMs": wall_ms,
    }
    if result.exit_code is not None:
        details["exitCode"] = result.exit_code
    if result.cancelled:
        notes.append("Command aborted")
    elif result.timed_out:
        notes.append(f"Command timed out after {timeout} seconds")
    elif result.exit_code:
        notes.append(f"Command exited with code {result.exit_code}")
    is_error = bool(result.cancelled or result.timed_out or result.exit_code)
    text = result.output if result.output else "(no output)"
    if notes:
        text = text.rstrip("\n") + "\n\n" + "\n\n".join(notes)
    return ToolResult.text(text, details, is_error=is_error)


def _start_background(params: Params, ctx: ToolContext, shell: str, command: str, cwd: Path) -> ToolResult:
    from atomic_host.kit.tool_env import pass_through, tool_environment
    from builtin_plugins.tools import _background

    log_dir = _temp_dir(ctx)
    if log_dir is None:
        raise ToolError("Cannot start a background process: the session temp directory is unavailable")
    env = tool_environment(params.env, keep=pass_through(ctx.settings.get("shellEnv")))
    try:
        bp = _background.start(ctx.state, command, str(cwd), log_dir, shell=shell, env=env)
    except OSError as e:
        raise ToolError(f"Cannot start background process: {e}") from e
    text = (
        f"Started background process {bp.id} (pid {bp.pid}).\nLog: {bp.log_path}\n"
        f'Read the log to see its output; stop it with kill {{"id": "{bp.id}"}}.'
    )
    return ToolResult.text(text, {"id": bp.id, "pid": bp.pid, "logPath": bp.log_path, "background": True})
