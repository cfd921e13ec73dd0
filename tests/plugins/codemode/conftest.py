"""A hand-built ToolContext whose ``call_tool`` runs real small tools, like the host does."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from atomic_host.contract.tools import Tool, ToolContext, ToolError, ToolResult


class AddParams(BaseModel):
    a: float
    b: float


class ReadParams(BaseModel):
    path: str


class SleepParams(BaseModel):
    seconds: float


async def _add(p: AddParams, ctx: ToolContext) -> str:
    total = p.a + p.b
    return str(int(total) if total.is_integer() else total)


async def _read(p: ReadParams, ctx: ToolContext) -> ToolResult:
    path = Path(ctx.cwd, p.path)
    if not path.is_file():
        raise ToolError(f"File not found: {p.path}")
    return ToolResult.text(path.read_text(), {"bytes": path.stat().st_size})


async def _sleep(p: SleepParams, ctx: ToolContext) -> str:
    await asyncio.sleep(p.seconds)
    return "slept"


def make_tools() -> list[Tool]:
    return [
        Tool(name="add", description="Add two numbers.", params=AddParams, handler=_add),
        Tool(name="read", description="Read a text file.", params=ReadParams, handler=_read),
        Tool(name="sleep", description="Sleep a while.", params=SleepParams, handler=_sleep),
        Tool(name="codemode", description="x", params={"type": "object"}, handler=_add, exposure="model-only"),
        Tool(
            name="tool_search",
            description="x",
            params={"type": "object"},
            handler=_add,
            exposure="model-only",
        ),
    ]


class Host:
    """Dispatches tool calls the way the host does: validate, run, errors become results."""

    def __init__(self, cwd: str) -> None:
        self.tools = {t.name: t for t in make_tools()}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.updates: list[ToolResult] = []
        self.signal = asyncio.Event()
        self.cwd = cwd

    async def call_tool(self, name: str, args: dict[str, Any]) -> ToolResult:
        self.calls.append((name, args))
        tool = self.tools.get(name)
        if tool is None:
            return ToolResult.text(f"Tool {name} not found", is_error=True)
        try:
            model = tool.params_model()
            params = model.model_validate(args) if model else args
            out = await tool.get_handler()(params, self.ctx())
        except Exception as exc:
            return ToolResult.text(str(exc), is_error=True)
        return ToolResult.text(out) if isinstance(out, str) else out

    def ctx(self) -> ToolContext:
        return ToolContext(
            cwd=self.cwd,
            session_id="s1",
            tool_call_id="call-1",
            signal=self.signal,
            on_update=self.updates.append,
            call_tool=self.call_tool,
            list_tools=lambda: list(self.tools.values()),
        )


@pytest.fixture
def host(tmp_path: Path) -> Host:
    return Host(str(tmp_path))


def worker_pids() -> set[int]:
    """Live codemode worker processes that are children of this test process."""
    pids = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        state = stat.rsplit(")", 1)[1].split()[0]
        if ppid == os.getpid() and b"codemode/worker.py" in cmdline and state != "Z":
            pids.add(int(entry))
    return pids


@pytest.fixture
def live_workers():
    """The ``worker_pids`` function; also checks no worker outlives the test."""
    yield worker_pids
    assert worker_pids() == set()
