"""get_state / get_messages / get_last_assistant_text / get_session_stats (semantics §3.5)."""

from __future__ import annotations

from typing import Any

from agent_helpers import bash_call

USAGE = {"input": 100, "output": 20, "cacheRead": 5, "cacheWrite": 3}


async def test_state_messages_and_stats(agent_host: Any) -> None:
    async with agent_host() as host:
        state = await host.client.get_state()
        for key in ("model", "thinkingLevel", "isStreaming", "isCompacting", "steeringMode", "followUpMode",
                    "sessionId", "autoCompactionEnabled", "messageCount", "pendingMessageCount"):  # fmt: skip
            assert key in state, key
        assert state["messageCount"] == 0 and state["isStreaming"] is False
        assert state["steeringMode"] == state["followUpMode"] == "one-at-a-time"
        assert (await host.client.get_last_assistant_text()).text is None
        assert (await host.client.get_messages()).messages == []
        stats = await host.client.get_session_stats()
        assert "latestAssistantUsage" not in stats and stats["totalMessages"] == 0

        host.faux.push(
            {"content": [bash_call("echo one"), bash_call("echo two")], "usage": USAGE},
            {"content": "  Final words.  ", "usage": {**USAGE, "output": 30}},
        )
        await host.client.prompt_and_wait("go")
        messages = (await host.client.get_messages()).messages
        assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "toolResult", "assistant"]
        assert (await host.client.get_state())["messageCount"] == 5
        assert (await host.client.get_last_assistant_text()).text == "Final words."

        stats = await host.client.get_session_stats()
        assert (
            stats["userMessages"],
            stats["assistantMessages"],
            stats["toolCalls"],
            stats["toolResults"],
        ) == (1, 2, 2, 2)
        assert stats["totalMessages"] == 5
        tokens = stats["tokens"]
        assert (tokens["input"], tokens["output"], tokens["cacheRead"], tokens["cacheWrite"]) == (
            200,
            50,
            10,
            6,
        )
        assert tokens["total"] == 266
        assert stats["cost"] == 0
        latest = stats["latestAssistantUsage"]
        assert latest["output"] == 30
        ctx = stats["contextUsage"]
        assert ctx["contextWindow"] == 128000 and ctx["tokens"] > 0
        assert 0 < ctx["percent"] < 100


async def test_last_assistant_text_skips_empty_aborted(agent_host: Any) -> None:
    async with agent_host() as host:
        host.faux.push("first answer", {"content": "never", "delayMs": 5000})
        await host.client.prompt_and_wait("a")
        n0 = len(host.client.events)
        await host.client.prompt("b")
        await host.client.wait_for_event(
            lambda e: e["type"] == "message_start" and e["message"]["role"] == "assistant", after=n0
        )
        await host.client.abort()
        assert (await host.client.get_last_assistant_text()).text == "first answer"
        stats = await host.client.get_session_stats()
        assert stats["assistantMessages"] == 2 and stats["latestAssistantUsage"] is not None
