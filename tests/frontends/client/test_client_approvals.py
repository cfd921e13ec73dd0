"""``can_use_tool(tool_name, args) -> Allow | Deny`` answers the approval dialog (a ``select``
carrying ``approval``) through the real host: allowed calls run, a denial's message is the tool
result the model reads, "remember" is not asked again, a failing callback denies; every other
dialog goes to ``on_ui_request``. Against a stand-in gate (client_approval_ext.py) and, when it is
installed, the built-in approvals plugin."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from suite_paths import ROOT as ROOT_DIR

from atomic_host.client import Allow, Deny
from atomic_host.testing import start_host

EXT = str(Path(__file__).with_name("client_approval_ext.py"))


def _tool_results(host: Any) -> list[dict[str, Any]]:
    """The tool results the model was sent on its last call."""
    context = host.faux_calls()[-1]["context"]
    return [m for m in context["messages"] if m["role"] == "toolResult"]


async def test_allow_runs_the_call_and_the_callback_sees_tool_and_args() -> None:
    async with start_host("-e", EXT) as host:
        asked: list[tuple[str, dict[str, Any]]] = []

        def decide(tool: str, args: dict[str, Any]) -> Allow:
            asked.append((tool, args))
            return Allow()

        host.client.can_use_tool = decide
        host.faux.tool_call("bash", {"command": "echo approved > out.txt"})
        host.faux.push("done")
        result = await host.client.run("go")
        assert result.text == "done"
        assert asked == [("bash", {"command": "echo approved > out.txt"})]
        assert (host.cwd / "out.txt").read_text() == "approved\n"
        request = next(e for e in result if e.type == "extension_ui_request")
        assert request.method == "select" and request.options == ["Allow once", "Allow for this session", "Deny"]
        assert request["approval"]["toolName"] == "bash" and "diff" not in request["approval"]


async def test_deny_blocks_the_call_and_the_model_reads_the_message() -> None:
    async with start_host("-e", EXT) as host:
        host.client.can_use_tool = lambda tool, args: Deny("Use a scratch directory instead.")
        host.faux.tool_call("write", {"path": "notes.txt", "content": "x"})
        host.faux.push("understood")
        result = await host.client.run("write notes")
        assert result.text == "understood"
        assert not (host.cwd / "notes.txt").exists()
        end = next(e for e in result if e.type == "tool_execution_end")
        assert end.is_error and end.result.content[0].text == "Use a scratch directory instead."
        sent = _tool_results(host)
        assert sent[-1]["isError"] and sent[-1]["content"][0]["text"] == "Use a scratch directory instead."
        request = next(e for e in result if e.type == "extension_ui_request")
        assert request["approval"]["diff"].startswith("--- a/notes.txt")


async def test_allow_remember_is_not_asked_again_and_async_callbacks_work() -> None:
    async with start_host("-e", EXT) as host:
        asked: list[str] = []

        async def decide(tool: str, args: dict[str, Any]) -> Allow:
            await asyncio.sleep(0.01)
            asked.append(args["command"])
            return Allow(remember=True)

        host.client.can_use_tool = decide
        host.faux.tool_call("bash", {"command": "echo one >> log.txt"})
        host.faux.tool_call("bash", {"command": "echo two >> log.txt"})
        host.faux.push("done")
        await host.client.run("twice")
        assert asked == ["echo one >> log.txt"]
        assert (host.cwd / "log.txt").read_text() == "one\ntwo\n"


async def test_a_callback_that_raises_or_returns_junk_denies() -> None:
    async with start_host("-e", EXT) as host:
        replies = iter([RuntimeError("policy server down"), "yes"])

        def decide(tool: str, args: dict[str, Any]) -> Any:
            reply = next(replies)
            if isinstance(reply, Exception):
                raise reply
            return reply

        host.client.can_use_tool = decide
        host.faux.tool_call("bash", {"command": "touch a"})
        host.faux.tool_call("bash", {"command": "touch b"})
        host.faux.push("done")
        result = await host.client.run("go")
        ends = [e for e in result if e.type == "tool_execution_end"]
        assert [e.is_error for e in ends] == [True, True]
        texts = [e.result.content[0].text for e in ends]
        assert "can_use_tool failed: RuntimeError: policy server down" in texts[0]
        assert "not Allow or Deny" in texts[1]
        assert not (host.cwd / "a").exists() and not (host.cwd / "b").exists()


async def test_other_dialogs_go_to_on_ui_request() -> None:
    async with start_host("-e", EXT) as host:
        seen: list[tuple[str, Any]] = []

        def ui(request: Any) -> Any:
            seen.append((request.method, request.message or request.title))
            return "Ada" if request.method == "input" else None

        host.client.on_ui_request = ui
        host.client.can_use_tool = lambda tool, args: Allow()
        result = await host.client.run("/askname")
        assert result.disposition == "handled" and not result.is_error
        await host.client.wait_for_event(lambda e: e.get("method") == "notify")
        await asyncio.sleep(0.05)
        assert seen == [("input", "Your name?"), ("notify", "hello Ada")]


@pytest.mark.skipif(
    not ROOT_DIR.joinpath("builtin_plugins", "approvals").is_dir(),
    reason="the approvals plugin is not on this branch yet",
)
async def test_the_builtin_approvals_plugin_asks_and_can_use_tool_answers() -> None:
    async with start_host("--permission-mode", "default") as host:
        asked: list[str] = []

        def decide(tool: str, args: dict[str, Any]) -> Allow | Deny:
            asked.append(tool)
            return Allow() if tool == "bash" else Deny("No edits today.")

        host.client.can_use_tool = decide
        host.faux.tool_call("bash", {"command": "echo ran > ran.txt"})
        host.faux.tool_call("write", {"path": "w.txt", "content": "x"})
        host.faux.push("done")
        result = await host.client.run("go")
        assert asked == ["bash", "write"]
        assert (host.cwd / "ran.txt").exists() and not (host.cwd / "w.txt").exists()
        end = [e for e in result if e.type == "tool_execution_end"][-1]
        assert end.is_error and "No edits today." in end.result.content[0].text
