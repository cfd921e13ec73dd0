"""Tool policy lives on the Tool (``needs_ui``, ``opt_in``, ``max_result_chars``) and "built-in" comes
from the plugin record, not from lists of names in the host."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from atomic_host.testing import read_jsonl

PLUGIN = textwrap.dedent(
    """
    from atomic_host import Tool, hookimpl

    async def run(params, ctx):
        return "x" * 60_000

    @hookimpl
    def register_tools(register):
        schema = {"type": "object", "properties": {}}
        register(Tool("asks_the_user", "Needs a person to answer.", schema, run, needs_ui=True))
        register(Tool("plain_tool", "Needs nobody.", schema, run))
        register(Tool("bounded_tool", "Bounds its own output.", schema, run, max_result_chars=0))
    """
)


def _plugin(tmp_path: Path) -> Path:
    path = tmp_path / "policy_plugin.py"
    path.write_text(PLUGIN)
    return path


def _json_mode_tools(tmp_path: Path, *args: str) -> list[str]:
    """Run one ``--mode json`` prompt; the tool names the model was offered."""
    agent, work = tmp_path / "agent", tmp_path / "work"
    agent.mkdir(exist_ok=True)
    work.mkdir(exist_ok=True)
    script, log = tmp_path / "faux.jsonl", tmp_path / "faux-log.jsonl"
    script.write_text(json.dumps("done") + "\n")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("ATOMIC_")}
    env.update(ATOMIC_CODING_AGENT_DIR=str(agent), ATOMIC_FAUX_SCRIPT=str(script), ATOMIC_FAUX_LOG=str(log))
    proc = subprocess.run(
        [sys.executable, "-m", "atomic_host", "--mode", "json", "-p", "hi", "--provider", "faux", *args],
        cwd=work, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    calls = read_jsonl(log)
    return [t["name"] for t in calls[-1]["context"]["tools"]]


def test_tools_that_need_a_user_are_left_out_without_one(tmp_path: Path) -> None:
    tools = _json_mode_tools(tmp_path, "-e", str(_plugin(tmp_path)))
    assert "asks_the_user" not in tools and "ask_user_question" not in tools
    assert {"plain_tool", "bounded_tool", "read", "bash"} <= set(tools)


async def test_rpc_mode_offers_them_and_says_why_not_elsewhere(rpc_host: Any, tmp_path: Path) -> None:
    async with rpc_host("-e", str(_plugin(tmp_path))) as host:
        report = await host.client.get_tools()
        active = {t["name"] for t in report["tools"] if t["active"]}
        assert {"asks_the_user", "ask_user_question", "plain_tool"} <= active


async def test_builtin_defaults_come_from_the_builtin_plugins_registrations(rpc_host: Any, tmp_path: Path) -> None:
    async with rpc_host("-e", str(_plugin(tmp_path)), "--no-builtin-tools") as host:
        report = await host.client.get_tools()
        active = sorted(t["name"] for t in report["tools"] if t["active"])
        # Extension tools are not built-in whatever their source label says; every built-in default is gone.
        assert active == ["asks_the_user", "bounded_tool", "plain_tool"]
        assert report["selection"]["source"] == "no-built-in-tools"


async def test_max_result_chars_zero_keeps_a_large_result_inline(rpc_host: Any, tmp_path: Path) -> None:
    async with rpc_host("-e", str(_plugin(tmp_path))) as host:
        for name in ("bounded_tool", "plain_tool"):
            host.faux.push({"content": [{"type": "toolCall", "id": f"c-{name}", "name": name, "arguments": {}}]})
        host.faux.push("done")
        await host.client.prompt_and_wait("call both")
        results = {
            m["toolName"]: m["content"][0]["text"]
            for m in ((await host.client.get_messages()).messages)
            if m.get("role") == "toolResult"
        }
        assert results["bounded_tool"] == "x" * 60_000
        assert results["plain_tool"].startswith("<persisted-output>")
