"""Event order of one run (semantics §3.2) through the real ``atomic --mode rpc`` host."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from agent_helpers import bash_call, kinds, line_index, of_type, text_of

REPLY = "The quick brown fox jumps over the lazy dog, then naps in the warm afternoon sun."


async def test_text_reply_event_order_and_deltas(agent_host: Any) -> None:
    async with agent_host() as host:
        host.faux.push(REPLY)
        events = await host.client.prompt_and_wait("hello")
        assert kinds(events) == [
            "agent_start", "turn_start", "message_start:user", "message_end:user",
            "message_start:assistant", "message_end:assistant", "turn_end", "agent_end", "agent_settled",
        ]  # fmt: skip
        # The prompt response is printed before agent_start.
        resp = line_index(host, lambda r: r.get("type") == "response" and r.get("command") == "prompt")
        start = line_index(host, lambda r: r.get("type") == "agent_start")
        assert resp < start
        start_msg = of_type(events, "message_start")[1]["message"]
        assert start_msg["stopReason"] == "pending" and start_msg["content"] == []
        updates = [e for e in events if e["type"] == "message_update"]
        sub = [u["assistantMessageEvent"]["type"] for u in updates]
        assert sub[0] == "start" and sub[1] == "text_start" and sub[-1] == "text_end"
        deltas = [u["assistantMessageEvent"]["delta"] for u, k in zip(updates, sub, strict=True) if k == "text_delta"]
        # Faux chunks are 12/16/20 chars rotating: every chunk is its own event, never coalesced.
        expected, i, n = [], 0, 0
        while i < len(REPLY):
            size = (12, 16, 20)[n % 3]
            expected.append(REPLY[i : i + size])
            i, n = i + size, n + 1
        assert deltas == expected
        for u in updates:
            usage = u["usage"]
            assert usage["totalTokens"] == usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
            assert "partial" not in u and "message" not in u
        assert updates[-1]["assistantMessageEvent"]["content"] == REPLY
        end = of_type(events, "message_end")[-1]["message"]
        assert text_of(end) == REPLY and end["stopReason"] == "stop"
        turn_end = of_type(events, "turn_end")[0]
        assert turn_end["toolResults"] == [] and text_of(turn_end["message"]) == REPLY
        agent_end = of_type(events, "agent_end")[0]
        assert [m["role"] for m in agent_end["messages"]] == ["user", "assistant"]
        assert (await host.client.get_last_assistant_text()).text == REPLY


async def test_tool_turn_event_order_and_parallelism(agent_host: Any) -> None:
    async with agent_host() as host:
        host.faux.push(
            {
                "content": [
                    bash_call("sleep 0.5; echo first", "call_a"),
                    bash_call("sleep 0.5; echo second", "call_b"),
                    {"type": "toolCall", "id": "call_c", "name": "no_such_tool", "arguments": {}},
                    {"type": "toolCall", "id": "call_d", "name": "bash", "arguments": {"cmd": "x"}},
                ]
            },
            "All done.",
        )
        events = await host.client.prompt_and_wait("run tools")
        assert kinds(events) == [
            "agent_start", "turn_start", "message_start:user", "message_end:user",
            "message_start:assistant", "message_end:assistant",
            "tool_execution_start", "tool_execution_start", "tool_execution_start", "tool_execution_start",
            *[k for k in kinds(events) if k in ("tool_execution_update", "tool_execution_end")],
            "message_start:toolResult", "message_end:toolResult", "message_start:toolResult",
            "message_end:toolResult", "message_start:toolResult", "message_end:toolResult",
            "message_start:toolResult", "message_end:toolResult",
            "turn_end", "turn_start", "message_start:assistant", "message_end:assistant", "turn_end",
            "agent_end", "agent_settled",
        ]  # fmt: skip
        assert of_type(events, "message_end")[1]["message"]["stopReason"] == "toolUse"
        starts = of_type(events, "tool_execution_start")
        assert [s["toolCallId"] for s in starts] == ["call_a", "call_b", "call_c", "call_d"]
        assert starts[0]["args"] == {"command": "sleep 0.5; echo first"}
        ends = {e["toolCallId"]: e for e in of_type(events, "tool_execution_end")}
        assert len(ends) == 4
        # Errors finish first (completion order), the sleeping calls later.
        end_order = [e["toolCallId"] for e in of_type(events, "tool_execution_end")]
        assert set(end_order[:2]) == {"call_c", "call_d"}
        assert (
            ends["call_c"]["isError"]
            and ends["call_c"]["result"]["content"][0]["text"] == "Tool no_such_tool not found"
        )
        assert ends["call_d"]["isError"] and "command" in ends["call_d"]["result"]["content"][0]["text"]
        assert ends["call_a"]["result"]["content"][0]["text"].strip() == "first"
        assert not ends["call_a"]["isError"]
        first_start = events.index(starts[0])
        a_end, b_end = (events.index(ends[k]) for k in ("call_a", "call_b"))
        assert first_start < a_end and first_start < b_end
        results = [e["message"] for e in of_type(events, "message_end") if e["message"]["role"] == "toolResult"]
        assert [r["toolCallId"] for r in results] == ["call_a", "call_b", "call_c", "call_d"]
        turn_end = of_type(events, "turn_end")[0]
        assert [r["toolCallId"] for r in turn_end["toolResults"]] == ["call_a", "call_b", "call_c", "call_d"]
        agent_end = of_type(events, "agent_end")[0]
        assert [m["role"] for m in agent_end["messages"]] == [
            "user", "assistant", "toolResult", "toolResult", "toolResult", "toolResult", "assistant",
        ]  # fmt: skip
        # The tool results reached the model on the second call.
        second_ctx = host.faux_calls()[1]["context"]["messages"]
        assert [m["role"] for m in second_ctx][-4:] == ["toolResult"] * 4


async def test_parallel_bash_wall_time(agent_host: Any) -> None:
    async with agent_host() as host:
        host.faux.push({"content": [bash_call("sleep 0.5"), bash_call("sleep 0.5")]}, "ok")
        n0 = len(host.client.events)
        await host.client.prompt("go")
        first = await host.client.wait_for_event("tool_execution_start", after=n0)
        t_start = time.monotonic()
        idx = host.client.events.index(first)
        await host.client.wait_for_event(
            lambda e: e["type"] == "message_start" and e["message"]["role"] == "toolResult", after=idx
        )
        tools_time = time.monotonic() - t_start
        await host.client.wait_for_idle(after=n0)
        assert tools_time < 0.9, f"two 0.5 s bash calls took {tools_time:.2f}s: not parallel"


HOOK_PLUGIN = """
from atomic_host import hookimpl
from atomic_host.contract.results import ToolCallDecision, ToolPatch


@hookimpl
def tool_call(event, api):
    cmd = event.input.get("command", "")
    if "forbidden" in cmd:
        return ToolCallDecision(block=True, reason="no forbidden commands")
    if "blockme" in cmd:
        return ToolCallDecision(block=True)
    if cmd == "echo original":
        event.input["command"] = "echo rewritten"
    return None


@hookimpl
def tool_result(event, api):
    if event.input.get("command") == "echo patch":
        return ToolPatch(content=[{"type": "text", "text": "patched by hook"}], details={"patched": True})
    return None
"""


async def test_tool_call_and_tool_result_hooks(agent_host: Any, tmp_path: Path) -> None:
    plugin = tmp_path / "hooks_ext.py"
    plugin.write_text(HOOK_PLUGIN)
    async with agent_host("-e", str(plugin)) as host:
        host.faux.push(
            {
                "content": [
                    bash_call("echo forbidden", "c1"),
                    bash_call("echo original", "c2"),
                    bash_call("echo patch", "c3"),
                    bash_call("echo blockme", "c4"),
                ]
            },
            "fine",
        )
        events = await host.client.prompt_and_wait("hooks")
        ends = {e["toolCallId"]: e for e in of_type(events, "tool_execution_end")}
        assert ends["c1"]["isError"] and ends["c1"]["result"]["content"][0]["text"] == "no forbidden commands"
        assert ends["c4"]["isError"]
        assert ends["c4"]["result"]["content"][0]["text"] == "Tool execution was blocked"
        assert not ends["c2"]["isError"]
        assert ends["c2"]["result"]["content"][0]["text"].strip() == "rewritten"
        assert ends["c3"]["result"]["content"][0]["text"] == "patched by hook"
        assert ends["c3"]["result"]["details"] == {"patched": True}
        messages = (await host.client.get_messages()).messages
        results = {m["toolCallId"]: m for m in messages if m["role"] == "toolResult"}
        assert text_of(results["c3"]) == "patched by hook"
        assert text_of(results["c2"]).strip() == "rewritten"
