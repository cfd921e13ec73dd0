"""Shared helpers of tests/plugins/mcp: fixture-server entries, waiting for tools, process checks."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
FX_SERVER = HERE / "mcpfx_server.py"
SECRET = "fx-secret-0123456789abcdef"


def fx_entry(pid_file: Path | None = None, log: Path | None = None, **extra: Any) -> dict[str, Any]:
    """A stdio ``mcpServers`` entry that runs the fixture server with this interpreter."""
    env: dict[str, str] = {"FX_API_TOKEN": SECRET, "FX_PLAIN": "plain-value-visible"}
    if pid_file is not None:
        env["MCPFX_PID_FILE"] = str(pid_file)
    if log is not None:
        env["MCPFX_LOG"] = str(log)
    return {"command": sys.executable, "args": [str(FX_SERVER)], "env": env, **extra}


def python_entry(code: str, **extra: Any) -> dict[str, Any]:
    """A stdio entry running ``python -c code`` (servers that crash, hang or talk garbage)."""
    return {"command": sys.executable, "args": ["-c", code], **extra}


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e.get("type") == kind]


def mcp_errors(events: list[dict[str, Any]]) -> list[str]:
    return [e["error"] for e in of_type(events, "extension_error") if e.get("event") == "mcp"]


async def wait_tools(client: Any, prefix: str, timeout: float = 40) -> list[dict[str, Any]]:
    """Poll ``get_tools`` until tools named ``prefix*`` are listed; returns those entries."""
    deadline = time.monotonic() + timeout
    while True:
        tools = [t for t in (await client.get_tools())["tools"] if t["name"].startswith(prefix)]
        if tools:
            return tools
        if time.monotonic() > deadline:
            raise TimeoutError(f"no tool {prefix}* within {timeout}s")
        await asyncio.sleep(0.05)


async def wait_error(client: Any, needle: str, timeout: float = 40) -> str:
    """The first MCP ``extension_error`` whose text contains ``needle``."""
    event = await client.wait_for_event(
        lambda e: e.get("type") == "extension_error" and needle in e.get("error", ""), timeout=timeout
    )
    return str(event["error"])


async def call_tool(host: Any, name: str, arguments: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
    """Have the faux model call one tool, then answer; returns the ``tool_execution_end`` event."""
    host.faux.tool_call(name, arguments)
    host.faux.push("done")
    events = await host.client.prompt_and_wait(f"call {name}", timeout=timeout)
    ends = of_type(events, "tool_execution_end")
    assert len(ends) == 1, events
    return ends[0]


def text_of(end: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in end["result"]["content"] if b.get("type") == "text")


def alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


async def wait_gone(pids: list[int], timeout: float = 10) -> list[int]:
    """The pids still alive after ``timeout`` seconds (empty when all are gone)."""
    deadline = time.monotonic() + timeout
    while True:
        left = [p for p in pids if alive(p)]
        if not left or time.monotonic() > deadline:
            return left
        await asyncio.sleep(0.05)


def read_pids(path: Path) -> list[int]:
    return [int(x) for x in path.read_text().split()] if path.exists() else []


async def wait_connected(client: Any, server: str, timeout: float = 40) -> str:
    """Poll ``/mcp`` (which, unlike ``get_tools``, does not recompute the tool selection) until the
    server is connected; returns the listing."""
    deadline = time.monotonic() + timeout
    while True:
        n0 = len(client.events)
        await client.prompt("/mcp")
        note = await client.wait_for_event(lambda e: e.get("method") == "notify", after=n0, timeout=10)
        lines = [x for x in str(note["message"]).splitlines() if x.startswith(f"{server} [")]
        if lines and "] connected," in lines[0]:
            return str(note["message"])
        if time.monotonic() > deadline:
            raise TimeoutError(f"{server} not connected within {timeout}s: {note['message']}")
        await asyncio.sleep(0.1)
