"""Steering / follow-up queues, queue modes, clear/pause/resume (semantics §3.3)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agent_helpers import bash_call, kinds, of_type, text_of

from atomic_host.client import RpcError

BUSY_ERROR = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."


def user_texts(events: list[dict[str, Any]]) -> list[str]:
    return [text_of(e["message"]) for e in of_type(events, "message_start") if e["message"]["role"] == "user"]


async def _start_tool_run(host: Any, seconds: float = 0.6) -> int:
    """Prompt a run whose first turn is a sleeping bash call; return the event index before it."""
    n0 = len(host.client.events)
    assert (await host.client.prompt("work"))["disposition"] == "started"
    await host.client.wait_for_event("tool_execution_start", after=n0)
    return n0


async def test_one_at_a_time_steer_then_follow_up_in_one_run(agent_host: Any) -> None:
    async with agent_host() as host:
        host.faux.push({"content": [bash_call("sleep 0.6")]}, "r1", "r2", "r3")
        n0 = await _start_tool_run(host)
        assert (await host.client.steer("s1"))["disposition"] == "queued"
        assert (await host.client.call("prompt", message="s2", streamingBehavior="steer"))["disposition"] == "queued"
        assert (await host.client.follow_up("f1"))["disposition"] == "queued"
        state = await host.client.get_state()
        assert state["isStreaming"] and state["pendingMessageCount"] == 3
        await host.client.wait_for_idle(after=n0)
        events = host.client.events[n0:]
        assert kinds(events).count("agent_start") == 1
        assert user_texts(events) == ["work", "s1", "s2", "f1"]
        # Each polled message opens its own turn, before one LLM call each.
        assert kinds(events).count("turn_start") == 4
        updates = [(e["steering"], e["followUp"]) for e in of_type(events, "queue_update")]
        assert updates == [
            (["s1"], []), (["s1", "s2"], []), (["s1", "s2"], ["f1"]),
            (["s2"], ["f1"]), ([], ["f1"]), ([], []),
        ]  # fmt: skip
        # Steering arrives after the whole tool batch: s1 follows the toolResult.
        roles = [m["role"] for m in of_type(events, "agent_end")[0]["messages"]]
        assert roles == [
            "user",
            "assistant",
            "toolResult",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
        ]
        assert (await host.client.get_state())["pendingMessageCount"] == 0


async def test_all_mode_drains_queue_before_one_call_and_is_saved(agent_host: Any) -> None:
    async with agent_host() as host:
        await host.client.set_steering_mode("all")
        await host.client.set_follow_up_mode("all")
        saved = json.loads((host.agent_dir / "settings.json").read_text())
        assert saved["steeringMode"] == "all" and saved["followUpMode"] == "all"
        state = await host.client.get_state()
        assert state["steeringMode"] == "all" and state["followUpMode"] == "all"
        host.faux.push({"content": [bash_call("sleep 0.6")]}, "after steering", "after follow-ups")
        n0 = await _start_tool_run(host)
        await host.client.steer("s1")
        await host.client.steer("s2")
        await host.client.follow_up("f1")
        await host.client.call("prompt", message="f2", streamingBehavior="followUp")
        await host.client.wait_for_idle(after=n0)
        events = host.client.events[n0:]
        assert user_texts(events) == ["work", "s1", "s2", "f1", "f2"]
        assert kinds(events).count("turn_start") == 3  # tool turn, steering turn, follow-up turn
        calls = host.faux_calls()
        assert len(calls) == 3
        last_roles = [m["role"] for m in calls[1]["context"]["messages"]][-3:]
        assert last_roles == ["toolResult", "user", "user"]


async def test_busy_prompt_without_streaming_behavior_is_rejected(agent_host: Any) -> None:
    async with agent_host() as host:
        host.faux.push({"content": [bash_call("sleep 0.5")]}, "done")
        n0 = await _start_tool_run(host)
        before = await host.client.get_state()
        n_events = len(host.client.events)
        resp = await host.client.request({"type": "prompt", "message": "interrupt"})
        assert resp["success"] is False and resp["error"] == BUSY_ERROR
        after = await host.client.get_state()
        assert after["pendingMessageCount"] == before["pendingMessageCount"] == 0
        assert not of_type(host.client.events[n_events:], "queue_update")
        await host.client.wait_for_idle(after=n0)
        assert "interrupt" not in user_texts(host.client.events[n0:])


async def test_clear_queue_returns_texts_and_emits_empty_update(agent_host: Any) -> None:
    async with agent_host() as host:
        host.faux.push({"content": [bash_call("sleep 0.6")]}, "done")
        n0 = await _start_tool_run(host)
        await host.client.steer("s1")
        await host.client.follow_up("f1")
        await host.client.follow_up("f2")
        n1 = len(host.client.events)
        cleared = await host.client.clear_queue()
        assert cleared == {"steering": ["s1"], "followUp": ["f1", "f2"]}
        upd = await host.client.wait_for_event("queue_update", after=n1)
        assert upd["steering"] == [] and upd["followUp"] == []
        await host.client.wait_for_idle(after=n0)
        assert user_texts(host.client.events[n0:]) == ["work"]
        assert await host.client.clear_queue() == {"steering": [], "followUp": []}


async def test_pause_and_resume_queued_messages(agent_host: Any) -> None:
    async with agent_host() as host:
        host.faux.push("one")
        await host.client.prompt_and_wait("first")
        await host.client.pause_queued_messages()
        assert (await host.client.get_state()).get("queuedMessagesPaused") is True
        n0 = len(host.client.events)
        assert (await host.client.prompt("held"))["disposition"] == "queued"
        assert (await host.client.get_state())["pendingMessageCount"] == 1
        host.faux.push("two")
        assert await host.client.resume_queued_messages() == {"released": True}
        # resume starts no turn by itself
        state = await host.client.get_state()
        assert state["pendingMessageCount"] == 1 and not state["isStreaming"]
        assert "agent_start" not in kinds(host.client.events[n0:])
        assert await host.client.resume_queued_messages() == {"released": False}
        events = await host.client.prompt_and_wait("next")
        texts = user_texts(events)
        assert "held" in texts and "next" in texts


async def test_steer_on_idle_session_with_messages_starts_a_turn(agent_host: Any) -> None:
    async with agent_host() as host:
        host.faux.push("one", "two")
        await host.client.prompt_and_wait("first")
        n0 = len(host.client.events)
        assert (await host.client.steer("nudge"))["disposition"] == "queued"
        await host.client.wait_for_idle(after=n0)
        events = host.client.events[n0:]
        assert "agent_start" in kinds(events)
        assert user_texts(events) == ["nudge"]
        assert (await host.client.get_last_assistant_text()).text == "two"


async def test_steer_on_empty_session_stays_queued(agent_host: Any) -> None:
    async with agent_host() as host:
        n0 = len(host.client.events)
        assert (await host.client.follow_up("later"))["disposition"] == "queued"
        state = await host.client.get_state()
        assert state["pendingMessageCount"] == 1 and not state["isStreaming"]
        assert "agent_start" not in kinds(host.client.events[n0:])
        host.faux.push("a", "b")
        events = await host.client.prompt_and_wait("now")
        # The follow-up is delivered in the same run, once the loop would otherwise stop.
        assert user_texts(events) == ["now", "later"]
        assert kinds(events).count("agent_start") == 1


async def test_steer_rejects_extension_commands(agent_host: Any, tmp_path: Any) -> None:
    plugin = tmp_path / "cmd_ext.py"
    plugin.write_text(
        "from atomic_host import hookimpl\nfrom atomic_host.contract.commands import SlashCommand\n\n"
        "@hookimpl\ndef register_commands(register):\n"
        "    register(SlashCommand(name='hello', description='hi', handler=lambda args, api: None))\n"
    )
    async with agent_host("-e", str(plugin)) as host:
        with pytest.raises(RpcError):
            await host.client.steer("/hello")
