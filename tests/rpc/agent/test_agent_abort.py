"""abort at every phase of a run (semantics §3.4)."""

from __future__ import annotations

import json
import time
from typing import Any

from agent_helpers import bash_call, kinds, of_type, text_of


def _abort_line_after_run_end(host: Any, n_agent_end: int) -> None:
    """The abort response is printed after the aborted run's agent_end (the loop was idle)."""
    records = [json.loads(line) for line in host.client.lines]
    ends = [i for i, r in enumerate(records) if r.get("type") == "agent_end"]
    abort_at = next(i for i, r in enumerate(records) if r.get("command") == "abort")
    assert len(ends) >= n_agent_end and ends[n_agent_end - 1] < abort_at


async def _persisted_assistants(host: Any) -> list[dict[str, Any]]:
    entries = (await host.client.get_entries())["entries"]
    return [e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant"]


async def test_abort_before_first_byte(agent_host: Any) -> None:
    async with agent_host() as host:
        host.faux.push({"content": "never shown", "delayMs": 5000})
        n0 = len(host.client.events)
        await host.client.prompt("wait")
        await host.client.wait_for_event(
            lambda e: e["type"] == "message_start" and e["message"]["role"] == "assistant", after=n0
        )
        t0 = time.monotonic()
        assert await host.client.abort() is None
        assert time.monotonic() - t0 < 2
        assert not (await host.client.get_state())["isStreaming"]
        _abort_line_after_run_end(host, 1)
        events = host.client.events[n0:]
        end = of_type(events, "message_end")[-1]["message"]
        assert end["role"] == "assistant" and end["stopReason"] == "aborted"
        assert of_type(events, "turn_end")[-1]["toolResults"] == []
        assert (await _persisted_assistants(host))[-1]["stopReason"] == "aborted"
        assert (await host.client.get_last_assistant_text()).text is None


async def test_abort_mid_text(agent_host: Any) -> None:
    async with agent_host() as host:
        host.faux.push({"content": "word " * 200, "chunkDelayMs": 30})
        n0 = len(host.client.events)
        await host.client.prompt("talk")
        await host.client.wait_for_event(
            lambda e: e["type"] == "message_update" and e["assistantMessageEvent"]["type"] == "text_delta",
            after=n0,
        )
        await host.client.abort()
        _abort_line_after_run_end(host, 1)
        end = of_type(host.client.events[n0:], "message_end")[-1]["message"]
        assert end["stopReason"] == "aborted"
        partial = text_of(end)
        assert partial and len(partial) < len("word " * 200)
        persisted = (await _persisted_assistants(host))[-1]
        assert persisted["stopReason"] == "aborted" and text_of(persisted) == partial


async def test_abort_mid_tool_keeps_queue_until_next_prompt(agent_host: Any) -> None:
    async with agent_host() as host:
        host.faux.push({"content": [bash_call("sleep 10", "slow")]}, "handled both")
        n0 = len(host.client.events)
        await host.client.prompt("work")
        await host.client.wait_for_event("tool_execution_start", after=n0)
        await host.client.steer("keep me")
        t0 = time.monotonic()
        await host.client.abort()
        assert time.monotonic() - t0 < 3
        _abort_line_after_run_end(host, 1)
        events = host.client.events[n0:]
        tool_end = of_type(events, "tool_execution_end")[0]
        assert tool_end["isError"] and "Command aborted" in tool_end["result"]["content"][0]["text"]
        entries = (await host.client.get_entries())["entries"]
        results = [e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "toolResult"]
        assert "Command aborted" in text_of(results[0])
        # The queued steer survives the abort but starts nothing by itself (semantics §3.4) ...
        state = await host.client.get_state()
        assert state["pendingMessageCount"] == 1 and not state["isStreaming"]
        assert kinds(host.client.events[n0:]).count("agent_start") == 1
        # ... the next prompt delivers it, after the prompt's own message, before one model call.
        n1 = len(host.client.events)
        run = await host.client.prompt_and_wait("next")
        texts = [text_of(e["message"]) for e in of_type(run, "message_start") if e["message"]["role"] == "user"]
        assert texts == ["next", "keep me"]
        assert kinds(host.client.events[n1:]).count("turn_start") == 1
        assert text_of(of_type(run, "message_end")[-1]["message"]) == "handled both"
        assert (await host.client.get_state())["pendingMessageCount"] == 0


async def test_abort_when_idle_is_a_noop_success(agent_host: Any) -> None:
    async with agent_host() as host:
        n0 = len(host.client.events)
        resp = await host.client.request({"type": "abort"})
        assert resp["success"] is True and "data" not in resp
        assert host.client.events[n0:] == []  # nothing ran, nothing was emitted
        host.faux.push("still works")
        events = await host.client.prompt_and_wait("hi")
        assert text_of(of_type(events, "message_end")[-1]["message"]) == "still works"
