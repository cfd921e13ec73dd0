"""``api.send_message`` / ``api.send_user_message`` from a real extension file (semantics §5.3):
every ``deliverAs``, idle and streaming, called from a command or from an ``on_event`` hook at a
chosen moment. Each message is delivered exactly once, in the documented place, persisted once,
and ``get_state`` answers throughout."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from agent_helpers import of_type, text_of
from runf_helpers import delivered, ext, extension_errors, gate_call, notes, sequence, session_records, user_texts

from atomic_host.testing import read_jsonl, start_host

pytestmark = pytest.mark.slow  # every delivery mode, idle and streaming

SENDER = ("-e", ext("runf_sender"))


def _send(**spec: Any) -> str:
    return "/runf_send " + json.dumps(spec)


def _arm(event_type: str, **spec: Any) -> str:
    return f"/runf_arm {event_type} " + json.dumps(spec)


async def _handled(host: Any, text: str) -> None:
    assert (await host.client.call("prompt", message=text, timeout=10))["disposition"] == "handled"


async def _at_gate(host: Any, prompt: str = "go") -> int:
    """Prompt a run that waits in the runf_gate tool; return the event index before it."""
    n0 = len(host.client.events)
    assert (await host.client.prompt(prompt))["disposition"] == "started"
    await host.client.wait_for_event("tool_execution_start", after=n0)
    return n0


async def _settle(host: Any, after: int) -> list[dict[str, Any]]:
    await host.client.wait_for_idle(after=after)
    await asyncio.sleep(0.3)  # a message delivered twice would start another run here
    state = await host.client.get_state()
    assert not state["isStreaming"]
    return host.client.events[after:]


def _llm_user_texts(call: dict[str, Any]) -> list[str]:
    return [text_of(m) for m in call["context"]["messages"] if m["role"] == "user"]


GATE_TURN = [
    "agent_start", "turn_start", "message_start:user:go", "message_end:user:go",
    "message_start:assistant", "message_end:assistant", "tool_execution_start", "tool_execution_end",
    "message_start:toolResult", "message_end:toolResult", "turn_end",
]  # fmt: skip
REPLY_TURN = ["message_start:assistant", "message_end:assistant", "turn_end"]


async def test_streaming_default_is_steer_delivered_once_after_the_tool_batch() -> None:
    async with start_host(*SENDER) as host:
        c = host.client
        host.faux.push(gate_call(), "after the note")
        n0 = await _at_gate(host)
        await _handled(host, _send(content="note-1"))
        state = await c.get_state()  # answers mid-run; custom messages are not listed as user input
        assert state["isStreaming"] and state["pendingMessageCount"] == 0
        await _handled(host, "/runf_release")
        events = await _settle(host, n0)
        assert sequence(events) == [
            *GATE_TURN, "turn_start", "message_start:custom:note-1", "message_end:custom:note-1",
            *REPLY_TURN, "agent_end", "agent_settled",
        ]  # fmt: skip
        assert not of_type(events, "queue_update")
        calls = host.faux_calls()
        assert len(calls) == 2 and _llm_user_texts(calls[1]) == ["go", "note-1"]
        assert await session_records(host) == [
            "user:go", "assistant:", "toolResult:runf_gate", "custom:note-1", "assistant:after the note",
        ]  # fmt: skip
        custom = next(e["message"] for e in events if e["type"] == "message_end" and e["message"]["role"] == "custom")
        assert custom["customType"] == "runf" and custom["display"] is True
        assert (await c.get_state())["messageCount"] == 5
        host.assert_protocol_lines()


async def test_on_event_send_mid_stream_does_not_loop() -> None:
    """The reported bug: send_message while the model streams was re-delivered every turn forever."""
    async with start_host(*SENDER) as host:
        c = host.client
        await _handled(host, _arm("message_update", content="mid-stream note"))
        host.faux.push("a reply in several chunks", "second reply")
        n0 = len(c.events)
        await c.prompt("go")
        events = await _settle(host, n0)
        assert sequence(events) == [
            "agent_start", "turn_start", "message_start:user:go", "message_end:user:go", *REPLY_TURN,
            "turn_start", "message_start:custom:mid-stream note", "message_end:custom:mid-stream note",
            *REPLY_TURN, "agent_end", "agent_settled",
        ]  # fmt: skip
        assert len(host.faux_calls()) == 2
        assert await session_records(host) == [
            "user:go", "assistant:a reply in several chunks", "custom:mid-stream note", "assistant:second reply",
        ]  # fmt: skip


async def test_follow_up_waits_for_steering_and_the_end_of_the_run() -> None:
    async with start_host(*SENDER) as host:
        c = host.client
        host.faux.push(gate_call(), "after s1", "after the follow-up")
        n0 = await _at_gate(host)
        await _handled(host, _send(content="later", deliver_as="followUp"))
        await c.steer("s1")
        await _handled(host, "/runf_release")
        events = await _settle(host, n0)
        assert sequence(events) == [
            *GATE_TURN, "turn_start", "message_start:user:s1", "message_end:user:s1", *REPLY_TURN,
            "turn_start", "message_start:custom:later", "message_end:custom:later", *REPLY_TURN,
            "agent_end", "agent_settled",
        ]  # fmt: skip
        assert [(e["steering"], e["followUp"]) for e in of_type(events, "queue_update")] == [(["s1"], []), ([], [])]


async def test_next_turn_rides_with_the_next_prompt_only() -> None:
    async with start_host(*SENDER) as host:
        c = host.client
        host.faux.push(gate_call(), "end of run 1", "run 2")
        n0 = await _at_gate(host)
        await _handled(host, _send(content="context for later", deliver_as="nextTurn"))
        await _handled(host, "/runf_release")
        events = await _settle(host, n0)
        assert delivered(events) == ["user:go"]  # not this run, not even its later turns
        # Idle nextTurn: nothing happens now either.
        n1 = len(c.events)
        count = (await c.get_state())["messageCount"]
        await _handled(host, _send(content="second context", deliver_as="nextTurn"))
        assert (await c.get_state())["messageCount"] == count
        assert sequence(c.events[n1:]) == []
        n2 = len(c.events)
        await c.prompt("p")
        events = await _settle(host, n2)
        assert sequence(events) == [
            "agent_start", "turn_start", "message_start:user:p", "message_end:user:p",
            "message_start:custom:context for later", "message_end:custom:context for later",
            "message_start:custom:second context", "message_end:custom:second context",
            *REPLY_TURN, "agent_end", "agent_settled",
        ]  # fmt: skip
        assert _llm_user_texts(host.faux_calls()[-1])[-3:] == ["p", "context for later", "second context"]
        # Delivered once: the prompt after that carries nothing extra.
        host.faux.push("run 3")
        n3 = len(c.events)
        await c.prompt("q")
        assert delivered(await _settle(host, n3)) == ["user:q"]
        records = await session_records(host)
        assert records.count("custom:context for later") == 1 and records.count("custom:second context") == 1


async def test_interrupt_aborts_then_runs_with_it_and_holds_the_queue() -> None:
    async with start_host(*SENDER) as host:
        c = host.client
        host.faux.push(gate_call(), "answering the interrupt", "answering p")
        n0 = await _at_gate(host)
        await c.steer("s1")
        await _handled(host, _send(content="stop, look at this", deliver_as="interrupt"))
        events = await _settle(host, n0)
        assert sequence(events) == [
            *GATE_TURN, "agent_end", "agent_settled",
            "agent_start", "turn_start", "message_start:custom:stop, look at this",
            "message_end:custom:stop, look at this", *REPLY_TURN, "agent_end", "agent_settled",
        ]  # fmt: skip
        tool_end = of_type(events, "tool_execution_end")[0]
        assert tool_end["isError"] and tool_end["result"]["content"][0]["text"] == "gate aborted"
        # The steer queued before the interrupt is kept (abort semantics) until the next prompt.
        assert (await c.get_state())["pendingMessageCount"] == 1
        n1 = len(c.events)
        await c.prompt("p")
        assert delivered(await _settle(host, n1)) == ["user:p", "user:s1"]
        assert await session_records(host) == [
            "user:go", "assistant:", "toolResult:runf_gate", "custom:stop, look at this",
            "assistant:answering the interrupt", "user:p", "user:s1", "assistant:answering p",
        ]  # fmt: skip


async def test_idle_deliveries_interrupt_trigger_turn_and_append() -> None:
    async with start_host(*SENDER) as host:
        c = host.client
        host.faux.push("r0", "r1", "r2")
        await c.prompt_and_wait("start")
        # idle + interrupt: nothing to abort, a run starts with the message
        n1 = len(c.events)
        await _handled(host, _send(content="i1", deliver_as="interrupt"))
        run = ["agent_start", "turn_start", *REPLY_TURN, "agent_end", "agent_settled"]
        events = await _settle(host, n1)
        assert sequence(events) == [*run[:2], "message_start:custom:i1", "message_end:custom:i1", *run[2:]]
        # idle + trigger_turn: the same
        n2 = len(c.events)
        await _handled(host, _send(content="t1", trigger_turn=True))
        events = await _settle(host, n2)
        assert sequence(events) == [*run[:2], "message_start:custom:t1", "message_end:custom:t1", *run[2:]]
        # idle otherwise (also with deliver_as steer/followUp): appended at once, no run
        count = (await c.get_state())["messageCount"]
        n3 = len(c.events)
        await _handled(host, _send(content="a1"))
        await _handled(host, _send(content="a2", deliver_as="steer", display=False, details={"k": 1}))
        await _handled(host, _send(content="a3", deliver_as="followUp"))
        await asyncio.sleep(0.3)
        assert sequence(c.events[n3:]) == [
            "message_start:custom:a1", "message_end:custom:a1", "message_start:custom:a2",
            "message_end:custom:a2", "message_start:custom:a3", "message_end:custom:a3",
        ]  # fmt: skip
        assert (await c.get_state())["messageCount"] == count + 3
        assert await session_records(host) == [
            "user:start", "assistant:r0", "custom:i1", "assistant:r1", "custom:t1", "assistant:r2",
            "custom:a1", "custom:a2", "custom:a3",
        ]  # fmt: skip
        state = await c.get_state()
        entries = read_jsonl(state["sessionLocation"])
        a2 = next(e for e in entries if e["type"] == "custom_message" and e["content"] == "a2")
        assert a2["display"] is False and a2["details"] == {"k": 1} and a2["customType"] == "runf"
        assert len(host.faux_calls()) == 3


async def test_sends_at_agent_end_and_agent_settled() -> None:
    async with start_host(*SENDER) as host:
        c = host.client
        # agent_end: the run is still streaming, so it is queued and a continuation delivers it.
        await _handled(host, _arm("agent_end", content="at end"))
        host.faux.push("r1", "r2")
        n0 = len(c.events)
        await c.prompt("go")
        events = await _settle(host, n0)
        assert sequence(events) == [
            "agent_start", "turn_start", "message_start:user:go", "message_end:user:go", *REPLY_TURN, "agent_end",
            "agent_start", "turn_start", "message_start:custom:at end", "message_end:custom:at end", *REPLY_TURN,
            "agent_end", "agent_settled",
        ]  # fmt: skip
        # agent_settled: the session is idle; trigger_turn starts a new run.
        await _handled(host, _arm("agent_settled", content="settled run", trigger_turn=True))
        host.faux.push("r3", "r4")
        n1 = len(c.events)
        await c.prompt("again")
        events = await _settle(host, n1)
        assert sequence(events) == [
            "agent_start", "turn_start", "message_start:user:again", "message_end:user:again", *REPLY_TURN,
            "agent_end", "agent_settled", "agent_start", "turn_start", "message_start:custom:settled run",
            "message_end:custom:settled run", *REPLY_TURN, "agent_end", "agent_settled",
        ]  # fmt: skip
        # agent_settled without trigger_turn: appended right after the run settled.
        await _handled(host, _arm("agent_settled", content="settled note"))
        host.faux.push("r5")
        n2 = len(c.events)
        await c.prompt("third")
        events = await _settle(host, n2)
        assert sequence(events)[-3:] == ["agent_settled", "message_start:custom:settled note",
                                         "message_end:custom:settled note"]
        records = await session_records(host)
        for text in ("at end", "settled run", "settled note"):
            assert records.count(f"custom:{text}") == 1
        assert len(host.faux_calls()) == 5


async def test_send_user_message_deliveries() -> None:
    async with start_host(*SENDER) as host:
        c = host.client
        host.faux.push(gate_call(), "after u1", "after u2", "literal")
        n0 = await _at_gate(host)
        await _handled(host, _send(kind="user", text="u1", deliver_as="steer"))
        await _handled(host, _send(kind="user", text="u2", deliver_as="followUp"))
        assert (await c.get_state())["pendingMessageCount"] == 2  # user messages are listed
        # streaming without deliver_as: refused like a prompt, reported as the command's error
        await _handled(host, _send(kind="user", text="u3"))
        [err] = extension_errors(host)
        assert err["extensionPath"] == "command:runf_send" and err["event"] == "command"
        assert err["error"].startswith(f"{ext('runf_sender')}:35: HostError: Agent is already processing")
        await _handled(host, "/runf_release")
        events = await _settle(host, n0)
        assert user_texts(events) == ["go", "u1", "u2"]
        assert [(e["steering"], e["followUp"]) for e in of_type(events, "queue_update")] == [
            (["u1"], []), (["u1"], ["u2"]), ([], ["u2"]), ([], []),
        ]  # fmt: skip
        # idle: a literal prompt, no slash-command dispatch or expansion
        literal = "/runf_send " + json.dumps({"content": "must not be sent"})
        n1 = len(c.events)
        await _handled(host, _send(kind="user", text=literal))
        events = await _settle(host, n1)
        assert delivered(events) == [f"user:{literal}"]
        assert "runf: sent started" in notes(host)
        assert "custom:must not be sent" not in await session_records(host)


async def test_bad_deliver_as_is_a_clear_error_and_changes_nothing() -> None:
    async with start_host(*SENDER) as host:
        c = host.client
        n0 = len(c.events)
        await _handled(host, _send(content="x", deliver_as="sideways"))
        [err] = extension_errors(host)
        assert err["extensionPath"] == "command:runf_send"
        assert "deliver_as must be one of" in err["error"] and "'sideways'" in err["error"]
        assert sequence(c.events[n0:]) == ["extension_error"]
        state = await c.get_state()
        assert state["messageCount"] == 0 and state["pendingMessageCount"] == 0
