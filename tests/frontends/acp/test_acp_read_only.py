"""Read-only means read-only: ACP's ``read_only`` mode runs only tools known to have no side effects
(the read-only built-ins, MCP tools whose server marks them ``readOnlyHint``) and refuses the rest
without asking; the default mode asks before every other tool, MCP tools included. Before, the todo
tool wrote its file and an MCP tool ran in ``read_only`` mode, and the default mode never asked before
MCP tools. Driven by the ACP SDK's own client, with two real MCP servers: ``mcp-server-time`` from
PyPI (its tools are annotated read-only) and the tests' server built on the ``mcp`` package (not)."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp_helpers import RecordingClient, acp_host, wait_for
from suite_paths import TESTS

pytestmark = pytest.mark.slow  # ACP and real MCP server processes

FX_SERVER = TESTS / "plugins" / "mcp" / "mcpfx_server.py"
_BIN = Path(sys.executable).parent / "mcp-server-time"
TIME_SERVER = str(_BIN) if _BIN.exists() else shutil.which("mcp-server-time")
if TIME_SERVER is None:
    pytest.skip("mcp-server-time is not installed (it is in the test extra)", allow_module_level=True)


def _settings(log: Path) -> dict[str, Any]:
    return {
        "mcpServers": {
            "fx": {"command": sys.executable, "args": [str(FX_SERVER)], "env": {"MCPFX_LOG": str(log)}},
            "time": {"command": TIME_SERVER, "args": ["--local-timezone", "UTC"]},
        }
    }


async def _wait_mcp_tools(host: Any) -> None:
    async def names() -> set[str]:
        data = await host.conn.ext_method("atomic/command", {"type": "get_tools"})
        return {t["name"] for t in data["data"]["tools"]}

    wanted = {"mcp__fx__echo", "mcp__time__get_current_time"}
    for _ in range(800):
        if wanted <= await names():
            return
        await asyncio.sleep(0.05)
    raise TimeoutError("MCP tools not listed")


def _final(host: Any, sid: str, call_id: str) -> Any:
    return [u for u in host.client.of("tool_call_update", sid) if u.tool_call_id == call_id and u.status][-1]


async def _turn(host: Any, sid: str, calls: list[tuple[str, str, dict[str, Any]]]) -> None:
    for name, call_id, arguments in calls:
        host.faux.tool_call(name, arguments, call_id)
    host.faux.push("done")
    response = await asyncio.wait_for(host.conn.prompt(session_id=sid, prompt=[text_block("go")]), 60)
    assert response.stop_reason == "end_turn"


CALLS = [
    ("todo", "todo-1", {"action": "create", "title": "Write the parser"}),
    ("mcp__fx__echo", "echo-1", {"text": "side effect"}),
    ("mcp__time__get_current_time", "time-1", {"timezone": "UTC"}),
    ("read", "read-1", {"path": "notes.txt"}),
]


async def test_read_only_mode_runs_only_read_only_tools(tmp_path: Path) -> None:
    log = tmp_path / "mcpfx.log"
    client = RecordingClient()
    async with acp_host(tmp_path, settings=_settings(log), client=client) as host:
        (host.cwd / "notes.txt").write_text("some notes\n")
        sid = (await host.new_session()).session_id
        await _wait_mcp_tools(host)
        await host.conn.set_session_mode(session_id=sid, mode_id="read_only")
        await _turn(host, sid, CALLS)
        assert client.permission_requests == []  # refused without asking
        for call_id in ("todo-1", "echo-1"):
            final = _final(host, sid, call_id)
            assert final.status == "failed" and "not allowed in Read only mode" in final.content[0].content.text
        assert not (host.cwd / ".atomic" / "todos").exists() or not list((host.cwd / ".atomic" / "todos").iterdir())
        assert not log.exists() or "echo" not in log.read_text()  # the MCP tool never ran
        assert _final(host, sid, "time-1").status == "completed"  # readOnlyHint: runs
        assert "some notes" in _final(host, sid, "read-1").content[0].content.text


async def test_default_mode_asks_before_every_tool_that_is_not_read_only(tmp_path: Path) -> None:
    log = tmp_path / "mcpfx.log"
    client = RecordingClient(answers=["allow_once", "reject_once"])
    async with acp_host(tmp_path, settings=_settings(log), client=client) as host:
        (host.cwd / "notes.txt").write_text("some notes\n")
        sid = (await host.new_session()).session_id
        await _wait_mcp_tools(host)
        await _turn(host, sid, CALLS)
        asked = [r["tool_call"].tool_call_id for r in client.permission_requests]
        assert asked == ["todo-1", "echo-1"]  # the time server's and the read tool's calls ran unasked
        assert _final(host, sid, "todo-1").status == "completed"  # allowed once
        assert _final(host, sid, "echo-1").status == "failed"  # rejected: the server was not called
        assert not log.exists() or "echo" not in log.read_text()
        assert _final(host, sid, "time-1").status == "completed"
        # allowed always, then the server is called without asking again
        client.answers[:] = ["allow_always"]
        await _turn(host, sid, [("mcp__fx__echo", "echo-2", {"text": "first"})])
        await _turn(host, sid, [("mcp__fx__echo", "echo-3", {"text": "second"})])
        assert [r["tool_call"].tool_call_id for r in client.permission_requests][2:] == ["echo-2"]
        await wait_for(lambda: log.exists() and log.read_text().count("echo") == 2)


async def test_settings_name_tools_that_ask_or_run(tmp_path: Path) -> None:
    """``acp.allowTools`` lets a tool run without asking (never in read_only); ``acp.askTools``
    makes even a read-only tool ask."""
    client = RecordingClient()
    settings = {"acp": {"allowTools": ["todo"], "askTools": ["read"]}}
    async with acp_host(tmp_path, settings=settings, client=client) as host:
        (host.cwd / "notes.txt").write_text("some notes\n")
        sid = (await host.new_session()).session_id
        await _turn(host, sid, [CALLS[0], CALLS[3]])
        assert [r["tool_call"].tool_call_id for r in client.permission_requests] == ["read-1"]
        assert _final(host, sid, "todo-1").status == "completed"
        await host.conn.set_session_mode(session_id=sid, mode_id="read_only")
        await _turn(host, sid, [("todo", "todo-2", {"action": "list"}), ("read", "read-2", {"path": "notes.txt"})])
        assert _final(host, sid, "todo-2").status == "failed"
        assert _final(host, sid, "read-2").status == "failed"  # asks in the other modes: refused here
