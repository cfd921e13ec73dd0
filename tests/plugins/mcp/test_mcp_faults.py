"""Servers that crash, hang or talk garbage: the host keeps serving, says which server failed
(``extension_error``), answers the model with an error, restarts the server on next use, and
leaves no process behind, however it exits."""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from pathlib import Path

import pytest
from mcp_helpers import (
    FX_SERVER,
    call_tool,
    fx_entry,
    mcp_errors,
    of_type,
    python_entry,
    read_pids,
    text_of,
    wait_error,
    wait_gone,
    wait_tools,
)

from atomic_host.testing import start_host

pytestmark = pytest.mark.slow  # servers that hang: each test waits out a timeout


def hang_entry(pid_file: Path, **extra: object) -> dict[str, object]:
    """A server that starts and never says a word (and ignores SIGTERM and stdin EOF)."""
    code = (
        "import os, signal, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"open({str(pid_file)!r}, 'a').write(f'{{os.getpid()}}\\n')\n"
        "time.sleep(600)\n"
    )
    return python_entry(code, **extra)


async def test_crash_at_start_and_hang_at_start(tmp_path: Path) -> None:
    hung = tmp_path / "hung.pids"
    settings = {
        "mcpServers": {
            "crashy": python_entry("import sys; print('crashy: no config file', file=sys.stderr); sys.exit(3)"),
            "hangs": hang_entry(hung, startupTimeoutMs=1500),
            "fx": fx_entry(),
        }
    }
    async with start_host(settings=settings) as host:
        c = host.client
        t = time.monotonic()
        await c.get_state()
        assert time.monotonic() - t < 2
        crash = await wait_error(c, '"crashy"')
        assert crash.startswith('MCP server "crashy" failed to start:') and "crashy: no config file" in crash
        hang = await wait_error(c, '"hangs"')
        assert 'MCP server "hangs" failed to start: did not answer within 1500 ms' in hang
        errors = of_type(c.events, "extension_error")
        assert all(e["extensionPath"] == "builtin:builtin_plugins.mcp" for e in errors)
        # The healthy server is unaffected, and the host still runs and aborts tools.
        await wait_tools(c, "mcp__fx__")
        names = [t["name"] for t in (await c.get_tools())["tools"]]
        assert not [n for n in names if n.startswith(("mcp__crashy", "mcp__hangs"))]
        host.faux.push({"content": [{"type": "toolCall", "name": "bash", "arguments": {"command": "sleep 20"}}]})
        n0 = len(c.events)
        await c.prompt("sleep")
        await c.wait_for_event("tool_execution_start", after=n0)
        t = time.monotonic()
        await c.abort()
        await c.wait_for_idle(after=n0, timeout=10)
        assert time.monotonic() - t < 3
        end = await call_tool(host, "mcp__fx__echo", {"text": "ok"})
        assert text_of(end) == "ok"
        # The hung server was stopped after its startup timeout (SIGTERM ignored: SIGKILL).
        assert await wait_gone(read_pids(hung)) == []


async def test_crash_mid_call_is_reported_and_restarted_on_next_use(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    async with start_host(settings={"mcpServers": {"fx": fx_entry(pids)}}) as host:
        c = host.client
        await wait_tools(c, "mcp__fx__crash")
        first = text_of(await call_tool(host, "mcp__fx__pid", {}))
        end = await call_tool(host, "mcp__fx__crash", {})
        assert end["isError"]
        assert 'MCP server "fx" failed during crash' in text_of(end)
        assert "restarted on next use" in text_of(end)
        error = await wait_error(c, 'MCP server "fx" failed')
        assert "crashing on purpose" in error
        n0 = len(c.events)
        await c.prompt("/mcp")
        note = await c.wait_for_event(lambda e: e.get("method") == "notify", after=n0, timeout=10)
        assert "fx [stdio] failed" in note["message"]
        # Next use: a new process answers.
        end = await call_tool(host, "mcp__fx__pid", {})
        assert not end["isError"] and text_of(end) != first
        assert len(read_pids(pids)) == 2
    assert await wait_gone(read_pids(pids)) == []


async def test_tool_timeout_then_a_hung_server_is_restarted(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    settings = {"mcpServers": {"fx": fx_entry(pids)}, "mcp": {"toolTimeoutMs": 800}}
    async with start_host(settings=settings) as host:
        c = host.client
        await wait_tools(c, "mcp__fx__slow")
        # A slow tool: timed out and reported; the server is fine and stays.
        t = time.monotonic()
        end = await call_tool(host, "mcp__fx__slow", {"seconds": 30})
        assert time.monotonic() - t < 5
        assert end["isError"] and "slow timed out after 800 ms" in text_of(end)
        await wait_error(c, "slow timed out")
        assert text_of(await call_tool(host, "mcp__fx__echo", {"text": "a"})) == "a"
        assert len(read_pids(pids)) == 1
        # A tool that blocks the whole server: after the timeout it does not answer a ping either,
        # so it is stopped, and the next call starts a new one.
        end = await call_tool(host, "mcp__fx__hang", {})
        assert end["isError"] and "timed out" in text_of(end)
        await wait_error(c, "stopped answering", timeout=30)
        assert text_of(await call_tool(host, "mcp__fx__echo", {"text": "b"})) == "b"
        assert len(read_pids(pids)) == 2
        assert await wait_gone(read_pids(pids)[:1]) == []


async def test_garbage_on_stdout_is_reported_and_the_server_still_works() -> None:
    code = (
        "import os, sys\n"
        "sys.stdout.write('this is not JSON-RPC\\n'); sys.stdout.flush()\n"
        f"os.execv(sys.executable, [sys.executable, {str(FX_SERVER)!r}])\n"
    )
    async with start_host(settings={"mcpServers": {"noisy": python_entry(code)}}) as host:
        c = host.client
        await wait_tools(c, "mcp__noisy__echo")
        error = await wait_error(c, '"noisy" sent an invalid message')
        assert "this is not JSON-RPC" not in error or len(error) < 400
        assert text_of(await call_tool(host, "mcp__noisy__echo", {"text": "fine"})) == "fine"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")
@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM"])
async def test_no_server_outlives_the_host(tmp_path: Path, how: str) -> None:
    pids = tmp_path / "pids"
    settings = {"mcpServers": {"fx": fx_entry(pids), "hangs": hang_entry(pids, startupTimeoutMs=60_000)}}
    async with start_host(settings=settings) as host:
        c = host.client
        await wait_tools(c, "mcp__fx__")
        while len(read_pids(pids)) < 2:
            await asyncio.sleep(0.05)
        assert c.proc is not None
        c.proc.send_signal(signal.SIGKILL if how == "SIGKILL" else signal.SIGTERM)
        await asyncio.wait_for(c.proc.wait(), 10)
        assert not mcp_errors(c.events)
    assert await wait_gone(read_pids(pids)) == []
