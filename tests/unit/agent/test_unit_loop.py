"""agent/loop.py and agent/tool_exec.py in process: ``run_agent`` against a small RunPorts fake
(real tools registry, real dispatcher over real plugin files), no session, no runtime, no host."""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from atomic_host.agent.loop import run_agent
from atomic_host.contract.providers import StreamOptions
from atomic_host.contract.tools import Tool, ToolContext, ToolResult
from atomic_host.kit.llm.complete import assistant_message
from atomic_host.plugins.dispatch import Dispatcher
from atomic_host.plugins.manager import PluginHost
from atomic_host.plugins.registry import ToolRegistry


class FakeRun:
    """A RunPorts implementation that records everything; replies come from a list."""

    def __init__(self, replies: list[dict[str, Any]], hooks: Dispatcher, tools: ToolRegistry) -> None:
        self.replies = replies
        self.hooks, self.tools = hooks, tools
        self.model: dict[str, Any] | None = {"provider": "fake", "id": "m", "api": "fake-api"}
        self.abort_signal = asyncio.Event()
        self.in_provider_stream = False
        self.cancelled_for_abort = False
        self.events: list[dict[str, Any]] = []
        self.recorded: list[dict[str, Any]] = []
        self.contexts: list[dict[str, Any]] = []
        self.steering: list[dict[str, Any]] = []
        self.follow_ups: list[dict[str, Any]] = []
        self.session = type("S", (), {"location": None, "id": "sid"})()

    def emit(self, event: dict[str, Any], line: str | None = None) -> None:
        self.events.append(event)

    def record_message(self, message: dict[str, Any]) -> None:
        self.recorded.append(message)

    async def deliver_message(self, message: dict[str, Any]) -> dict[str, Any]:
        self.record_message(message)
        self.emit({"type": "message_start", "message": message})
        self.emit({"type": "message_end", "message": message})
        return message

    async def saved(self) -> None:
        pass

    def end_message(self, message: dict[str, Any]) -> dict[str, Any]:
        return message

    def note_assistant(self, message: dict[str, Any]) -> None:
        pass

    async def prepare_next_call(self) -> bool:
        return True  # no mid-turn compaction here (tests/rpc/compaction/test_compaction_mid_turn.py)

    def poll_steering(self) -> list[dict[str, Any]]:
        taken, self.steering = self.steering, []
        return taken

    def poll_follow_up(self) -> list[dict[str, Any]]:
        taken, self.follow_ups = self.follow_ups, []
        return taken

    async def llm_context(self, system_prompt: str | None) -> dict[str, Any]:
        context = {"systemPrompt": system_prompt or "", "messages": list(self.recorded), "tools": []}
        self.contexts.append(context)
        return context

    def stream_options(self) -> StreamOptions:
        return StreamOptions(signal=self.abort_signal)

    def stream_fn(self, api: str) -> Callable[..., AsyncIterator[dict[str, Any]]] | None:
        async def stream(model: dict[str, Any], context: dict[str, Any], options: Any) -> AsyncIterator[dict[str, Any]]:
            reply = self.replies.pop(0)
            message = {**assistant_message(model, reply.get("stopReason", "stop")), "content": reply["content"]}
            yield {"type": "start", "partial": message}
            yield {"type": "done", "message": message}

        return stream if api == "fake-api" else None

    def model_tools(self) -> list[Tool]:
        return list(self.tools.all())

    def tool_context(self, tool: Tool, call_id: str, signal: Any, on_update: Any, call_tool: Any) -> ToolContext:
        return ToolContext(cwd=".", session_id="sid", tool_call_id=call_id, signal=signal, on_update=on_update)

    def temp_dir(self) -> str | None:
        return None


def _hooks(tmp_path: Path, *bodies: str) -> Dispatcher:
    host = PluginHost(lambda *a: None)
    for i, body in enumerate(bodies):
        path = tmp_path / f"p{i}.py"
        path.write_text("from atomic_host import *\n" + textwrap.dedent(body))
        assert host.load_file(path).status == "loaded"
    return Dispatcher(host, api=object())  # type: ignore[arg-type]


def _tools() -> ToolRegistry:
    registry = ToolRegistry(lambda *a: None)

    async def echo(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult.text(f"echo {params['text']}")

    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    registry.add(Tool(name="echo", description="echo", params=schema, handler=echo), "test", "")
    return registry


def _call(text: str, call_id: str) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": "echo", "arguments": {"text": text}}


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0}


def test_a_run_with_a_tool_batch_then_steering_then_a_follow_up(tmp_path: Path) -> None:
    run = FakeRun(
        [
            {"content": [_call("a", "c1"), _call("b", "c2")], "stopReason": "toolUse"},
            {"content": [{"type": "text", "text": "after steering"}]},
            {"content": [{"type": "text", "text": "after follow-up"}]},
        ],
        _hooks(tmp_path),
        _tools(),
    )
    asyncio.run(_steer_after_first_turn(run))
    kinds = [e["type"] for e in run.events]
    assert kinds[0] == "agent_start" and kinds[-1] == "agent_end"
    assert kinds.count("turn_start") == 3
    results = [m for m in run.recorded if m.get("role") == "toolResult"]
    assert [(m["toolCallId"], m["content"][0]["text"]) for m in results] == [("c1", "echo a"), ("c2", "echo b")]
    # the second model call saw the tool results and the steering message, the third the follow-up
    assert [m["role"] for m in run.contexts[1]["messages"]] == ["user", "assistant", "toolResult", "toolResult", "user"]
    assert run.contexts[2]["messages"][-1]["content"][0]["text"] == "and then this"
    assert [m["role"] for m in run.events[-1]["messages"]].count("assistant") == 3


async def _steer_after_first_turn(run: FakeRun) -> None:
    original = run.poll_steering
    turns = 0

    def poll() -> list[dict[str, Any]]:
        nonlocal turns
        turns += 1
        if turns == 2:  # after the tool batch of the first turn
            run.steering = [_user("steer me")]
            run.follow_ups = [_user("and then this")]
        return original()

    run.poll_steering = poll  # type: ignore[method-assign]
    await run_agent(run, [_user("start")], None)


def test_tool_call_hooks_block_rewrite_and_terminate_in_process(tmp_path: Path) -> None:
    hooks = _hooks(
        tmp_path,
        """
        @hookimpl
        def tool_call(event):
            if event.input["text"] == "forbidden":
                return ToolCallDecision(block=True, reason="no")
            if event.input["text"] == "rewrite":
                event.input["text"] = "rewritten"
            if event.input["text"] == "last":
                return ToolCallDecision(terminate=True)
        """,
    )
    run = FakeRun(
        [
            {"content": [_call("forbidden", "c1"), _call("rewrite", "c2")], "stopReason": "toolUse"},
            {"content": [_call("last", "c3")], "stopReason": "toolUse"},
            {"content": [{"type": "text", "text": "never streamed"}]},
        ],
        hooks,
        _tools(),
    )
    asyncio.run(run_agent(run, [_user("go")], None))
    ends = {e["toolCallId"]: e for e in run.events if e["type"] == "tool_execution_end"}
    assert ends["c1"]["isError"] and ends["c1"]["result"]["content"][0]["text"] == "no"
    assert ends["c2"]["result"]["content"][0]["text"] == "echo rewritten"
    assert ends["c3"]["result"]["content"][0]["text"] == "echo last"
    assert len(run.contexts) == 2 and len(run.replies) == 1  # terminate: no third model call


def test_a_missing_wire_api_and_a_length_stop_end_the_turn_without_running_tools(tmp_path: Path) -> None:
    run = FakeRun([{"content": [_call("half", "c1")], "stopReason": "length"}], _hooks(tmp_path), _tools())
    asyncio.run(run_agent(run, [_user("go")], None))
    end = next(e for e in run.events if e["type"] == "tool_execution_end")
    assert end["isError"] and "output token limit" in end["result"]["content"][0]["text"]
    run2 = FakeRun([], _hooks(tmp_path), _tools())
    run2.model = {"provider": "fake", "id": "m", "api": "nobody"}
    asyncio.run(run_agent(run2, [_user("go")], None))
    final = next(e["message"] for e in reversed(run2.events) if e["type"] == "message_end")
    assert final["stopReason"] == "error" and final["errorMessage"] == "No API implementation registered for nobody"
