"""The first prompt gets the configured MCP servers' tools: a prompt sent right after start (the
real ``mcp-server-time`` from PyPI takes one to three seconds to connect) waits, inside the run,
until every server has connected or failed — bounded by the servers' startup timeout and the hook
time bound, cut short by ``abort`` — and a server still not ready then is named in a notice."""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import pytest
from mcp_helpers import mcp_errors, python_entry, text_of

from atomic_host.testing import start_host

pytestmark = pytest.mark.slow  # a real server that takes seconds to connect, and its startup timeout

_BIN = Path(sys.executable).parent / "mcp-server-time"
COMMAND = str(_BIN) if _BIN.exists() else shutil.which("mcp-server-time")
if COMMAND is None:
    pytest.skip("mcp-server-time is not installed (it is in the test extra)", allow_module_level=True)

TIME = {"command": COMMAND, "args": ["--local-timezone", "UTC"]}
HANGS = python_entry("import time; time.sleep(600)", startupTimeoutMs=20000)


def _call(name: str, arguments: dict[str, object]) -> dict[str, object]:
    return {"content": [{"type": "toolCall", "id": "t1", "name": name, "arguments": arguments}]}


async def test_a_prompt_right_after_start_has_the_mcp_tools() -> None:
    async with start_host(settings={"mcpServers": {"time": TIME}}) as host:
        host.faux.push(_call("mcp__time__get_current_time", {"timezone": "Europe/Paris"}), "done")
        result = await host.client.prompt_and_wait("what time is it in Paris?", timeout=60)  # no wait before
        assert result.ok, result.error
        end = next(e for e in result if e["type"] == "tool_execution_end")
        assert not end["isError"], end
        assert json.loads(text_of(end))["timezone"] == "Europe/Paris"
        first = host.faux_calls()[0]["context"]
        assert "mcp__time__get_current_time" in {t["name"] for t in first["tools"]}
        assert not mcp_errors(host.client.events)


async def test_a_late_server_is_named_and_the_request_goes_without_it() -> None:
    settings = {"mcpServers": {"hangs": HANGS}, "hookTimeoutMs": 4000}  # the wait: at most ~3 s
    async with start_host(settings=settings) as host:
        c = host.client
        host.faux.push("answered without the late server")
        t0 = time.monotonic()
        result = await c.prompt_and_wait("hello", timeout=60)
        assert result.ok and result.text == "answered without the late server"
        assert 2.5 < time.monotonic() - t0 < 15  # it did wait
        notices = [e["message"] for e in c.events if e.get("method") == "notify" and "not ready" in e["message"]]
        assert notices == [
            'MCP server "hangs" is not ready yet: this request goes without their tools (added once connected)'
        ]
        assert not any(t["name"].startswith("mcp__") for t in host.faux_calls()[0]["context"]["tools"])
        host.faux.push("second")
        assert (await c.prompt_and_wait("again", timeout=60)).ok  # no second notice for the same server
        assert len([e for e in c.events if e.get("method") == "notify" and "not ready" in e["message"]]) == 1


async def test_abort_ends_the_wait_at_once() -> None:
    async with start_host(settings={"mcpServers": {"hangs": HANGS}}) as host:
        c = host.client
        host.faux.push("never streamed")
        n0 = len(c.events)
        await c.prompt("hello")
        await c.wait_for_event(lambda e: e["type"] == "message_start" and e["message"]["role"] == "assistant", after=n0)
        t0 = time.monotonic()
        await c.abort()  # the run waits for "hangs" (startup timeout 20 s)
        result = await c.wait_for_idle(after=n0, timeout=10)
        assert time.monotonic() - t0 < 3, result
        final = [e["message"] for e in c.events[n0:] if e["type"] == "message_end"][-1]
        assert final["role"] == "assistant" and final["stopReason"] == "aborted"
        assert not [e for e in c.events if e.get("method") == "notify"]  # an abort is no late server
