"""The codemode handler: one sandbox worker process per call, tool calls relayed to the host.

QuickJS cannot enforce a time limit while it may call into Python, so the wall clock is
enforced here by killing the worker (see ``worker.py`` for the wire format).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from atomic_host.contract.tools import Tool, ToolContext, ToolResult
from atomic_host.kit.tool_env import tool_environment

WORKER_PATH = Path(__file__).with_name("worker.py")
DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 300.0
MEMORY_LIMIT = 64 * 1024 * 1024
STACK_LIMIT = 1024 * 1024
LOG_CAP = 200_000
"""Console output kept per call (chars); the rest is dropped with a note."""
_LINE_LIMIT = 64 * 1024 * 1024
"""Largest JSON line accepted from the worker (tool arguments can be big)."""


class CodemodeParams(BaseModel):
    """Parameters of the codemode tool."""

    code: str = Field(
        description="JavaScript to run. Use `await tools.<name>({...})`; the final expression "
        "(or a top-level `return`) is the result."
    )
    timeout: float | None = Field(
        None,
        gt=0,
        le=MAX_TIMEOUT,
        description="Wall-clock limit in seconds for the whole program "
        f"(default {DEFAULT_TIMEOUT:g}, max {MAX_TIMEOUT:g}).",
    )


def callable_tools(ctx: ToolContext) -> list[Tool]:
    """Active tools the sandbox may call: everything except model-only tools (codemode itself too)."""
    tools = ctx.list_tools() if ctx.list_tools else []
    return [t for t in tools if t.exposure != "model-only"]


def describe_tools(tools: list[Tool]) -> str:
    """One line per tool, ``tools.name({a, b?}) - summary``, for prompts or a dynamic description."""
    lines = []
    for tool in tools:
        schema = tool.json_schema()
        required = set(schema.get("required", []))
        args = ", ".join(p if p in required else f"{p}?" for p in schema.get("properties", {}))
        lines.append(f"- tools.{tool.name}({{{args}}}) - {tool.one_line_summary()}")
    return "\n".join(lines)


async def run(params: CodemodeParams, ctx: ToolContext) -> ToolResult:
    """Run ``params.code`` in a fresh sandbox worker and return logs + result."""
    timeout = params.timeout if params.timeout is not None else DEFAULT_TIMEOUT
    allowed = {t.name: t for t in callable_tools(ctx)} if ctx.call_tool else {}
    return await _Run(ctx, allowed).execute(params.code, min(timeout, MAX_TIMEOUT))


@dataclass
class _Run:
    """State of one codemode call."""

    ctx: ToolContext
    allowed: dict[str, Tool]
    logs: list[str] = field(default_factory=list)
    log_chars: int = 0
    logs_truncated: bool = False
    calls: list[dict[str, Any]] = field(default_factory=list)
    call_tasks: set[asyncio.Task[None]] = field(default_factory=set)
    stderr_tail: bytes = b""
    write_lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def execute(self, code: str, timeout: float) -> ToolResult:
        start = time.monotonic()
        if self.ctx.signal.is_set():
            return self._result("codemode aborted", start, is_error=True, aborted=True)
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-I",
            str(WORKER_PATH),
            env=tool_environment(),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=_LINE_LIMIT,
        )
        drive = asyncio.ensure_future(self._drive(proc, code))
        abort = asyncio.ensure_future(self.ctx.signal.wait())
        stderr = asyncio.ensure_future(self._read_stderr(proc))
        try:
            done, _ = await asyncio.wait({drive, abort}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            if drive in done:
                kind, text = drive.result()
                if kind == "crash":
                    await asyncio.wait({stderr}, timeout=1)
                    tail = self.stderr_tail.decode("utf-8", "replace").strip()
                    text = f"{text}{': ' + tail if tail else ''}"
                if kind == "done":
                    return self._result(text, start)
                return self._result(f"codemode failed: {text}", start, is_error=True)
            if abort in done:
                return self._result("codemode aborted", start, is_error=True, aborted=True)
            return self._result(
                f"codemode timed out after {timeout:g} seconds (the sandbox was killed)",
                start,
                is_error=True,
                timed_out=True,
            )
        finally:
            # Kill first so nothing more is read, then cancel whatever is still in flight.
            if proc.returncode is None:
                proc.kill()
            for task in (drive, abort, stderr, *self.call_tasks):
                task.cancel()
            await proc.wait()

    async def _drive(self, proc: asyncio.subprocess.Process, code: str) -> tuple[str, str | None]:
        """Feed the worker and relay its messages until it reports a final outcome."""
        assert proc.stdin is not None and proc.stdout is not None
        init = {
            "code": code,
            "tools": sorted(self.allowed),
            "memoryLimit": MEMORY_LIMIT,
            "stackLimit": STACK_LIMIT,
        }
        await self._write(proc, init)
        while line := await proc.stdout.readline():
            try:
                msg = json.loads(line)
            except ValueError:
                return "crash", f"the sandbox worker sent an invalid message: {line[:200]!r}"
            kind = msg.get("type")
            if kind == "log":
                self._log(str(msg.get("text", "")))
            elif kind == "call":
                task = asyncio.ensure_future(self._relay_call(proc, msg))
                self.call_tasks.add(task)
                task.add_done_callback(self.call_tasks.discard)
            elif kind == "done":
                return "done", msg.get("value")
            elif kind == "error":
                return "error", str(msg.get("message"))
        code_ = await proc.wait()
        return "crash", f"the sandbox worker exited unexpectedly (exit code {code_})"

    async def _relay_call(self, proc: asyncio.subprocess.Process, msg: dict[str, Any]) -> None:
        name = str(msg.get("name"))
        args = msg.get("args")
        result = await self._invoke(name, args if isinstance(args, dict) else {})
        self.calls.append({"name": name, "isError": result["isError"]})
        try:
            await self._write(proc, {"id": msg.get("id"), "result": result})
        except (BrokenPipeError, ConnectionResetError):
            pass  # the worker is gone; execute() reports why

    async def _invoke(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        if name not in self.allowed or self.ctx.call_tool is None:
            result = ToolResult.text(f'Tool "{name}" cannot be called from codemode.', is_error=True)
        else:
            try:
                result = await self.ctx.call_tool(name, args)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the host normally turns errors into results; be safe anyway
                result = ToolResult.text(f"{type(exc).__name__}: {exc}", is_error=True)
        text = "\n".join(b.get("text", "") for b in result.content if b.get("type") == "text")
        return {
            "text": text,
            "content": result.content,
            "isError": result.is_error,
            "details": result.details if result.details is not None else {},
        }

    async def _write(self, proc: asyncio.subprocess.Process, obj: dict[str, Any]) -> None:
        assert proc.stdin is not None
        data = json.dumps(obj, default=str).encode() + b"\n"
        async with self.write_lock:
            proc.stdin.write(data)
            await proc.stdin.drain()

    async def _read_stderr(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        while chunk := await proc.stderr.read(65536):
            self.stderr_tail = (self.stderr_tail + chunk)[-4000:]

    def _log(self, text: str) -> None:
        if self.log_chars >= LOG_CAP:
            self.logs_truncated = True
            return
        self.logs.append(text[: LOG_CAP - self.log_chars])
        self.log_chars += len(text) + 1
        self.ctx.on_update(ToolResult.text(self._logs_text()))

    def _logs_text(self) -> str:
        text = "\n".join(self.logs)
        return text + "\n[console output truncated]" if self.logs_truncated else text

    def _result(
        self, value: str | None, start: float, *, is_error: bool = False, **flags: bool
    ) -> ToolResult:
        parts = [p for p in (self._logs_text(), value) if p]
        details: dict[str, Any] = {
            "toolCalls": list(self.calls),
            "wallTimeMs": round((time.monotonic() - start) * 1000),
            **{_camel(k): v for k, v in flags.items()},
        }
        return ToolResult.text("\n\n".join(parts) or "(no output)", details, is_error)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)
