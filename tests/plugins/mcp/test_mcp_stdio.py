"""A real stdio MCP server (tests/plugins/mcp/mcpfx_server.py, written with the SDK's own server class)
driven through the real ``atomic --mode rpc`` subprocess: the faux model calls its tools."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp_helpers import (
    SECRET,
    alive,
    call_tool,
    fx_entry,
    mcp_errors,
    of_type,
    read_pids,
    text_of,
    wait_connected,
    wait_gone,
    wait_tools,
)

from atomic_host.testing import host_env, start_host

pytestmark = pytest.mark.slow  # real MCP server processes


async def test_tools_listed_called_and_mapped(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    settings = {"mcpServers": {"fx": fx_entry(pids)}}
    t0 = time.monotonic()
    async with start_host(settings=settings) as host:
        c = host.client
        await c.get_state()
        first_state = time.monotonic() - t0
        tools = {t["name"]: t for t in await wait_tools(c, "mcp__fx__")}
        assert {"mcp__fx__echo", "mcp__fx__fail", "mcp__fx__slow", "mcp__fx__pixel", "mcp__fx__weather"} <= set(tools)
        echo = tools["mcp__fx__echo"]
        assert echo["active"] and echo["source"] == 'mcp "fx"' and echo["sourcePath"] == "settings.json"
        assert echo["summary"] == "Echo the text back."

        # Text: the result reaches the model, with the server's schema in the tool definition.
        end = await call_tool(host, "mcp__fx__echo", {"text": "hello there"})
        assert not end["isError"] and text_of(end) == "hello there"
        assert end["result"]["details"]["server"] == "fx" and end["result"]["details"]["tool"] == "echo"
        last = host.faux_calls()[-1]["context"]
        sent = {t["name"]: t for t in last["tools"]}["mcp__fx__echo"]
        assert sent["description"] == "Echo the text back."
        assert sent["parameters"]["properties"]["text"]["type"] == "string"
        assert sent["parameters"]["required"] == ["text"]
        assert "hello there" in json.dumps(last["messages"][-1])

        # isError results are error results, with the server's message.
        end = await call_tool(host, "mcp__fx__fail", {"message": "it broke"})
        assert end["isError"] and "it broke" in text_of(end)

        # Structured content: in details, and as text when the server sent it as such.
        end = await call_tool(host, "mcp__fx__weather", {"city": "Oslo"})
        assert not end["isError"]
        assert end["result"]["details"]["structuredContent"]["city"] == "Oslo"
        assert "sunny" in text_of(end)

        # Images stay images.
        end = await call_tool(host, "mcp__fx__pixel", {})
        (block,) = end["result"]["content"]
        assert block["type"] == "image" and block["mimeType"] == "image/png" and block["data"]

        # Bad arguments are the server's to refuse: an error result, the host goes on.
        end = await call_tool(host, "mcp__fx__echo", {"txet": 1})
        assert end["isError"]

        assert not mcp_errors(c.events)
        assert first_state < 5, first_state
        server_pids = read_pids(pids)
        assert len(server_pids) == 1
    # stdin EOF: the host stops its servers on the way out.
    assert await wait_gone(server_pids) == []


async def test_abort_a_slow_call_then_the_server_still_answers(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    async with start_host(settings={"mcpServers": {"fx": fx_entry(log=log)}}) as host:
        c = host.client
        await wait_tools(c, "mcp__fx__slow")
        host.faux.tool_call("mcp__fx__slow", {"seconds": 30})  # the abort ends the run: no reply after it
        n0 = len(c.events)
        await c.prompt("go slow")
        await c.wait_for_event("tool_execution_start", after=n0)
        while "slow start" not in (log.read_text() if log.exists() else ""):
            await asyncio.sleep(0.02)
        t = time.monotonic()
        state = await c.get_state()  # the loop is free while the call waits
        assert state["isStreaming"] and time.monotonic() - t < 1
        await c.abort()
        await c.wait_for_idle(after=n0, timeout=10)
        took = time.monotonic() - t
        (end,) = of_type(c.events[n0:], "tool_execution_end")
        assert end["isError"] and "aborted" in text_of(end).lower()
        assert took < 3, took
        # The server was told (notifications/cancelled) and stopped the work.
        deadline = time.monotonic() + 5
        while "slow cancelled" not in log.read_text() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert "slow cancelled" in log.read_text()
        assert "slow done" not in log.read_text()
        end = await call_tool(host, "mcp__fx__echo", {"text": "still here"})
        assert text_of(end) == "still here"


async def test_mcp_command_lists_servers_and_tools() -> None:
    settings = {"mcpServers": {"fx": fx_entry(), "broken": {"command": "/nonexistent/mcp-server"}}}
    async with start_host(settings=settings) as host:
        c = host.client
        commands = {x["name"]: x for x in (await c.call("get_commands"))["commands"]}
        assert commands["mcp"]["source"] == "extension" and "MCP" in commands["mcp"]["description"]
        await wait_tools(c, "mcp__fx__")
        n0 = len(c.events)
        assert (await c.prompt("/mcp"))["disposition"] == "handled"
        note = await c.wait_for_event(lambda e: e.get("method") == "notify", after=n0, timeout=10)
        text = note["message"]
        assert "fx [stdio] connected, 11 tools" in text
        assert "  mcp__fx__echo" in text
        assert "broken [stdio] failed, 0 tools" in text and "command not found: /nonexistent/mcp-server" in text
        # /mcp restart: a new server process.
        first = text_of(await call_tool(host, "mcp__fx__pid", {}))
        n0 = len(c.events)
        assert (await c.prompt("/mcp restart fx"))["disposition"] == "handled"
        note = await c.wait_for_event(lambda e: e.get("method") == "notify", after=n0, timeout=20)
        assert "fx [stdio] connected" in note["message"]
        assert text_of(await call_tool(host, "mcp__fx__pid", {})) != first


async def test_tool_list_changed_adds_tools() -> None:
    async with start_host(settings={"mcpServers": {"fx": fx_entry()}}) as host:
        c = host.client
        await wait_tools(c, "mcp__fx__grow")
        assert not [t for t in (await c.get_tools())["tools"] if t["name"] == "mcp__fx__extra"]
        assert text_of(await call_tool(host, "mcp__fx__grow", {})) == "grown"
        (extra,) = await wait_tools(c, "mcp__fx__extra", timeout=10)
        assert extra["active"]
        assert text_of(await call_tool(host, "mcp__fx__extra", {})) == "extra tool here"


async def test_secrets_in_env_are_masked_and_never_echoed(tmp_path: Path) -> None:
    err = (tmp_path / "stderr.txt").open("wb")
    # The server prints its token on stderr before it starts, and the host forwards the server's
    # stderr to its own: the token must arrive there masked.
    entry = fx_entry()
    entry["args"] = [
        "-c",
        "import os, runpy, sys; print('fx token:', os.environ['FX_API_TOKEN'], file=sys.stderr, flush=True); "
        f"runpy.run_path({entry['args'][0]!r}, run_name='__main__')",
    ]
    settings = {"mcpServers": {"fx": entry}, "mcp": {"forwardStderr": True}}
    async with start_host(settings=settings, stderr=err.fileno()) as host:
        c = host.client
        await wait_tools(c, "mcp__fx__getenv")
        # The server does get the value...
        end = await call_tool(host, "mcp__fx__getenv", {"name": "FX_API_TOKEN"})
        assert "REDACTED" in text_of(end)  # ...but what it echoes back is masked like any credential.
        end = await call_tool(host, "mcp__fx__getenv", {"name": "FX_PLAIN"})
        assert text_of(end) == "plain-value-visible"  # only credential-looking names are masked
        # The host's own variables (API keys and the rest) do not reach servers.
        end = await call_tool(host, "mcp__fx__getenv", {"name": "ATOMIC_FAUX_SCRIPT"})
        assert text_of(end) == "(unset)"
        n0 = len(c.events)
        await c.prompt("/mcp")
        await c.wait_for_event(lambda e: e.get("method") == "notify", after=n0, timeout=10)
        sessions = list(host.agent_dir.rglob("*.jsonl"))
        assert sessions
        stored = "".join(p.read_text() for p in sessions)
    assert SECRET not in "\n".join(c.lines)
    assert SECRET not in stored
    err.close()
    stderr = (tmp_path / "stderr.txt").read_text()
    assert "mcp[fx]: fx token: " in stderr  # the server's line reached the host's stderr...
    assert SECRET not in stderr  # ...with the token masked


def test_json_mode_waits_for_servers_before_its_one_prompt(tmp_path: Path) -> None:
    agent, work = tmp_path / "agent", tmp_path / "work"
    agent.mkdir()
    work.mkdir()
    pids = tmp_path / "pids"
    (agent / "settings.json").write_text(json.dumps({"mcpServers": {"fx": fx_entry(pids)}}))
    script = tmp_path / "faux.jsonl"
    call = {"content": [{"type": "toolCall", "name": "mcp__fx__echo", "arguments": {"text": "one shot"}}]}
    script.write_text(json.dumps(call) + "\n" + json.dumps("done") + "\n")
    env = host_env(agent, script, tmp_path / "faux-log.jsonl")
    proc = subprocess.run(
        [sys.executable, "-m", "atomic_host", "--mode", "json", "-p", "echo", "--provider", "faux"],
        cwd=work, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    (end,) = of_type(events, "tool_execution_end")
    assert not end["isError"] and text_of(end) == "one shot"
    assert all(not alive(p) for p in read_pids(pids))


async def test_tool_selection_applies_to_mcp_tools() -> None:
    settings = {"mcpServers": {"fx": fx_entry()}, "defaultTools": ["read", "+mcp__fx__echo", "+mcp__fx__pid"]}
    async with start_host("--exclude-tools", "mcp__fx__pid", settings=settings) as host:
        c = host.client
        await wait_connected(c, "fx")
        # Before any get_tools recomputes the selection, the model already sees what it allows.
        host.faux.push("ok")
        await c.prompt_and_wait("which tools?")
        sent = sorted(t["name"] for t in host.faux_calls()[-1]["context"]["tools"])
        assert sent == ["mcp__fx__echo", "read"], sent
        tools = {t["name"]: t for t in (await c.get_tools())["tools"]}
        assert tools["mcp__fx__echo"]["active"] and not tools["mcp__fx__weather"]["active"]
        assert tools["mcp__fx__pid"]["inactiveReason"] == "excluded by --exclude-tools"
