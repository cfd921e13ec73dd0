"""Compaction inside a turn (semantics §4.6 ``midTurn``): after a tool batch, before the run's next
model call, through the real host and the scripted provider (which records every request).

faux-1 has a 128,000-token window: the threshold is 128,000 − 16,384 = 111,616 tokens. A reply that
reports 111,000 input tokens and a tool that prints 4,000 characters (1,000 tokens) cross it."""

from __future__ import annotations

import asyncio
import json
import time

from compaction_helpers import file_entries, of_type, seed, session_file

from atomic_host.testing import start_host

BIG_OUTPUT = "python3 -c 'print(\"x\" * 4000)'"
OVERFLOW = {"stopReason": "error", "errorMessage": "prompt is too long: 300000 tokens > 200000 maximum"}


def tool_call(command: str, usage: dict[str, int] | None = None, call_id: str = "c1") -> dict:
    step: dict = {"content": [{"type": "toolCall", "id": call_id, "name": "bash", "arguments": {"command": command}}]}
    if usage:
        step["usage"] = usage
    return step


async def test_a_tool_heavy_turn_compacts_between_tool_results_and_the_next_call() -> None:
    async with start_host() as host:
        c = host.client
        await seed(host)
        calls_before = len(host.faux_calls())
        host.faux.push(tool_call(BIG_OUTPUT, {"input": 111000, "output": 10}), "1,5", "finished the work")
        events = await c.prompt_and_wait("third")
        kinds = [e["type"] for e in events]
        assert kinds.count("agent_start") == 1  # one run: the turn went on after the compaction
        [start] = of_type(events, "compaction_start")
        assert start == {"type": "compaction_start", "reason": "threshold", "midTurn": True}
        [end] = of_type(events, "compaction_end")
        assert end["midTurn"] is True and end["reason"] == "threshold" and end["willRetry"] is False
        assert end["result"]["rung"] == "planned" and "errorMessage" not in end
        assert end["result"]["backupPath"].endswith(".auto-compact.bak")
        # between the tool batch's turn_end and the next turn
        assert kinds.index("tool_execution_end") < kinds.index("compaction_start")
        first_turn_end = kinds.index("turn_end")
        assert first_turn_end < kinds.index("compaction_start") < kinds.index("compaction_end")
        assert kinds.index("compaction_end") < len(kinds) - 1 - kinds[::-1].index("turn_start")
        assert not of_type(events, "agent_continue_error")
        # requests: the tool call, the planner, then the continuation with the compacted context
        calls = host.faux_calls()[calls_before:]
        assert len(calls) == 3
        context = calls[2]["context"]["messages"]
        assert len(context) == 1 and context[0]["role"] == "user"
        text = context[0]["content"][0]["text"]
        assert "(filtered 5 lines)" in text and "x" * 4000 in text  # the kept tail: the tool call and result
        assert "requirement 1:" not in text  # the planner's deleted lines are gone
        assert of_type(events, "message_end")[-1]["message"]["content"][0]["text"] == "finished the work"
        entries = file_entries(session_file(host))
        assert [e["type"] for e in entries].count("compaction") == 1
        # the boundary sits before the continuation's reply
        assert entries[-2]["type"] == "compaction" and entries[-1]["message"]["role"] == "assistant"
        host.assert_protocol_lines()


async def test_a_turn_below_the_threshold_is_not_compacted_and_auto_compaction_off_is_honoured() -> None:
    async with start_host() as host:
        c = host.client
        await seed(host)
        host.faux.push(tool_call("echo small", {"input": 1000, "output": 10}), "done")
        events = await c.prompt_and_wait("third")
        assert not of_type(events, "compaction_start")
        await c.call("set_auto_compaction", enabled=False)
        host.faux.push(tool_call(BIG_OUTPUT, {"input": 111000, "output": 10}), "done again")
        events = await c.prompt_and_wait("fourth")
        assert not of_type(events, "compaction_start")
        assert of_type(events, "message_end")[-1]["message"]["content"][0]["text"] == "done again"
        host.assert_protocol_lines()


async def test_still_too_long_after_compaction_sends_agent_continue_error_and_no_request(tmp_path) -> None:
    # An 8,000-token window (the scripted replies' prompts are ~3,300 tokens); the tool prints 40,000
    # characters (10,000 tokens): the kept tail alone does not fit, so the compacted context cannot be sent.
    (tmp_path / "agent").mkdir()
    overrides = {"providers": {"faux": {"modelOverrides": {"faux-1": {"contextWindow": 8000}}}}}
    (tmp_path / "agent" / "models.json").write_text(json.dumps(overrides))
    settings = {"compaction": {"reserveTokens": 1000}}
    async with start_host(base=tmp_path, settings=settings) as host:
        c = host.client
        await seed(host)
        calls_before = len(host.faux_calls())
        host.faux.push(tool_call("python3 -c 'print(\"y\" * 40000)'", {"input": 3400, "output": 10}), "1,5")
        host.faux.push("never asked")
        events = await c.prompt_and_wait("third")
        [end] = of_type(events, "compaction_end")
        assert end["midTurn"] is True and end["result"]["rung"] == "planned"
        assert end["errorMessage"].startswith("The context remains over the model's input limit after compaction (")
        assert end["errorMessage"].endswith("> 8000 tokens); the next provider request was not sent.")
        [error] = of_type(events, "agent_continue_error")
        assert error == {"type": "agent_continue_error", "source": "post_compaction",
                         "errorMessage": end["errorMessage"]}
        kinds = [e["type"] for e in events]
        assert kinds.index("compaction_end") < kinds.index("agent_continue_error") < kinds.index("agent_end")
        assert kinds.count("agent_start") == 1 and kinds[-1] == "agent_settled"
        assert len(host.faux_calls()) - calls_before == 2  # the tool call and the planner; no continuation
        assert [e["type"] for e in file_entries(session_file(host))].count("compaction") == 1
        state = await c.get_state()
        assert state["isStreaming"] is False and state["isCompacting"] is False
        host.assert_protocol_lines()


VERBOSE_STRATEGY = '''
from atomic_host import CompactResult, hookimpl


@hookimpl
def session_before_compact(event, api):
    return CompactResult("[User]: " + "z" * 40000)  # a "summary" of 10,000 tokens
'''


async def test_overflow_recovery_still_too_long_is_not_retried(tmp_path) -> None:
    # An extension's summary of 10,000 tokens for an 8,000-token window: the retry would overflow
    # again, so it is not sent.
    (tmp_path / "agent").mkdir()
    overrides = {"providers": {"faux": {"modelOverrides": {"faux-1": {"contextWindow": 8000}}}}}
    (tmp_path / "agent" / "models.json").write_text(json.dumps(overrides))
    ext = tmp_path / "verbose.py"
    ext.write_text(VERBOSE_STRATEGY)
    async with start_host("-e", str(ext), base=tmp_path, settings={"compaction": {"reserveTokens": 1000}}) as host:
        c = host.client
        await seed(host)
        calls_before = len(host.faux_calls())
        host.faux.push(OVERFLOW, "never asked")
        events = await c.prompt_and_wait("third")
        [end] = of_type(events, "compaction_end")
        assert end["reason"] == "overflow" and end["result"]["rung"] == "extension"
        assert end["willRetry"] is False and "midTurn" not in end
        assert end["errorMessage"].startswith("The context remains over the model's input limit after compaction")
        [error] = of_type(events, "agent_continue_error")
        assert error["source"] == "post_compaction" and error["errorMessage"] == end["errorMessage"]
        assert [e["type"] for e in events].count("agent_start") == 1
        assert len(host.faux_calls()) - calls_before == 1  # the overflowed request only
        host.assert_protocol_lines()


async def test_an_overflow_after_a_recovered_one_in_the_same_run_is_recovered_again() -> None:
    async with start_host() as host:
        c = host.client
        await seed(host)
        # overflow -> compacted, retried -> a tool call -> overflow again -> compacted again -> done
        host.faux.push(OVERFLOW, "1,5", tool_call("echo step"), OVERFLOW, "1,2", "all done")
        events = await c.prompt_and_wait("third")
        ends = of_type(events, "compaction_end")
        assert [e["reason"] for e in ends] == ["overflow", "overflow"]
        assert all(e["result"] is not None and e["willRetry"] is True for e in ends)
        assert not [e for e in ends if e.get("unresolvedOverflow")]
        assert of_type(events, "message_end")[-1]["message"]["content"][0]["text"] == "all done"
        # (two overflows in a row stay unresolved: test_compaction_auto.py)
        host.assert_protocol_lines()


async def test_get_state_names_the_running_compactions_reason() -> None:
    async with start_host() as host:
        c = host.client
        await seed(host)
        assert (await c.get_state())["resourceOverlaps"] == []
        host.faux.push(tool_call(BIG_OUTPUT, {"input": 111000, "output": 10}), {"content": "1,5", "delayMs": 1500})
        host.faux.push("done")
        start = len(c.events)
        await c.prompt("third")
        seen: list[str | None] = []
        for _ in range(200):
            state = await c.get_state()
            if state["isCompacting"]:
                seen.append(state.get("compactionReason"))
                break
            await asyncio.sleep(0.02)
        assert seen == ["threshold"]  # a mid-turn compaction: the run goes on meanwhile
        await c.wait_for_idle(after=start, timeout=30)
        state = await c.get_state()
        assert state["isCompacting"] is False and "compactionReason" not in state
        host.assert_protocol_lines()


async def test_abort_during_a_mid_turn_compaction_answers_at_once_and_ends_the_run() -> None:
    async with start_host() as host:
        c = host.client
        await seed(host)
        calls_before = len(host.faux_calls())
        host.faux.push(tool_call(BIG_OUTPUT, {"input": 111000, "output": 10}), {"content": "1,5", "delayMs": 5000})
        host.faux.push("never asked")
        start = len(c.events)
        await c.prompt("third")
        await c.wait_for_event(lambda e: e["type"] == "compaction_start" and e.get("midTurn"), after=start)
        started = time.monotonic()
        await c.call("abort")
        assert time.monotonic() - started < 3  # the planner's 5 s reply is not waited for
        await c.wait_for_idle(after=start, timeout=30)
        events = c.events[start:]
        [end] = of_type(events, "compaction_end")
        assert end["aborted"] is True and end["result"] is None and end["midTurn"] is True
        assert "errorMessage" not in end and not of_type(events, "agent_continue_error")
        assert len(host.faux_calls()) - calls_before == 2  # no continuation after the abort
        assert not [e for e in file_entries(session_file(host)) if e["type"] == "compaction"]
        host.assert_protocol_lines()
