"""A real MCP server from PyPI, ``mcp-server-time`` (the reference servers' time server), over stdio:
the model calls ``mcp__time__get_current_time`` and the server's answer reaches the model."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from mcp_helpers import call_tool, mcp_errors, text_of, wait_tools

from atomic_host.testing import start_host

_BIN = Path(sys.executable).parent / "mcp-server-time"
COMMAND = str(_BIN) if _BIN.exists() else shutil.which("mcp-server-time")
if COMMAND is None:
    pytest.skip(
        "mcp-server-time is not installed (it is in the test extra: pip install -e '.[test]')", allow_module_level=True
    )


async def test_time_server_end_to_end() -> None:
    entry = {"command": COMMAND, "args": ["--local-timezone", "UTC"]}
    async with start_host(settings={"mcpServers": {"time": entry}}) as host:
        c = host.client
        tools = {t["name"]: t for t in await wait_tools(c, "mcp__time__")}
        assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= set(tools)
        end = await call_tool(host, "mcp__time__get_current_time", {"timezone": "Europe/Paris"})
        assert not end["isError"], end
        answer = json.loads(text_of(end))
        assert answer["timezone"] == "Europe/Paris" and answer["datetime"][:2] == "20"
        context = host.faux_calls()[-1]["context"]
        assert "Europe/Paris" in json.dumps(context["messages"][-1])
        sent = {t["name"]: t for t in context["tools"]}["mcp__time__get_current_time"]
        assert "timezone" in sent["parameters"]["properties"]
        # The server's own error (isError) is an error result for the model.
        end = await call_tool(host, "mcp__time__get_current_time", {"timezone": "Nowhere/Atlantis"})
        assert end["isError"] and "Nowhere/Atlantis" in text_of(end)
        end = await call_tool(
            host,
            "mcp__time__convert_time",
            {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
        )
        assert not end["isError"] and "21:00" in text_of(end)
        assert not mcp_errors(c.events)
