"""Automatic compaction: the threshold after a run and before a prompt, and overflow recovery."""

from __future__ import annotations

import json

from compaction_helpers import file_entries, of_type, seed, session_file

from atomic_host.testing import start_host

# faux-1 has contextWindow 128000: the threshold is 128000 - 16384 = 111616 tokens
BIG = {"input": 120000, "output": 10}
OVERFLOW = {"stopReason": "error", "errorMessage": "prompt is too long: 300000 tokens > 200000 maximum"}


async def test_threshold_after_a_run() -> None:
    async with start_host() as host:
        c = host.client
        await seed(host)
        host.faux.push({"content": "big answer", "usage": BIG}, "1,5")
        events = await c.prompt_and_wait("third")
        kinds = [e["type"] for e in events]
        assert kinds[-4:] == ["agent_end", "compaction_start", "compaction_end", "agent_settled"]
        assert events[-3] == {"type": "compaction_start", "reason": "threshold"}
        end = events[-2]
        assert end["reason"] == "threshold" and end["willRetry"] is False and end["aborted"] is False
        assert end["result"]["rung"] == "planned" and end["result"]["backupPath"].endswith(".auto-compact.bak")
        entry = file_entries(session_file(host))[-1]
        assert entry["type"] == "compaction" and entry["details"]["stats"] == end["result"]["stats"]
        # the boundary is newer than the big reply: the next run does not compact again
        host.faux.push("small answer")
        events = await c.prompt_and_wait("fourth")
        assert not of_type(events, "compaction_start")
        host.assert_protocol_lines()


async def test_threshold_before_a_prompt_and_disabled() -> None:
    async with start_host() as host:
        c = host.client
        await seed(host)
        await c.call("set_auto_compaction", enabled=False)
        host.faux.push({"content": "big answer", "usage": BIG})
        events = await c.prompt_and_wait("third")
        assert not of_type(events, "compaction_start")
        await c.call("set_auto_compaction", enabled=True)
        host.faux.push("1,5", "after compaction")
        events = await c.prompt_and_wait("fourth")
        kinds = [e["type"] for e in events]
        assert kinds.index("compaction_end") < kinds.index("agent_start")
        context = host.faux_calls()[-1]["context"]["messages"]
        assert context[0]["role"] == "user" and "(filtered 5 lines)" in context[0]["content"][0]["text"]
        host.assert_protocol_lines()


async def test_threshold_failures_and_small_sessions() -> None:
    async with start_host() as host:
        c = host.client
        host.faux.push({"content": "big answer", "usage": BIG})
        events = await c.prompt_and_wait("hi")
        # too small: a quiet compaction_end with a null result and no error
        [end] = of_type(events, "compaction_end")
        assert end == {"type": "compaction_end", "reason": "threshold", "result": None, "aborted": False,
                       "willRetry": False}
        await seed(host)
        host.faux.push({"content": "big answer", "usage": BIG}, "not ranges at all")
        events = await c.prompt_and_wait("third")
        [end] = of_type(events, "compaction_end")
        assert end["result"] is None and end["errorMessage"].startswith("Auto-compaction failed: ")
        assert not [e for e in file_entries(session_file(host)) if e["type"] == "compaction"]
        host.assert_protocol_lines()


async def test_overflow_compacts_and_retries() -> None:
    async with start_host() as host:
        c = host.client
        await seed(host)
        host.faux.push(OVERFLOW, "1,5", "recovered answer")
        events = await c.prompt_and_wait("third")
        kinds = [e["type"] for e in events]
        [start] = of_type(events, "compaction_start")
        assert start == {"type": "compaction_start", "reason": "overflow"}
        [end] = of_type(events, "compaction_end")
        assert end["willRetry"] is True and end["result"]["rung"] == "planned"
        assert end["result"]["backupPath"].endswith(".overflow-auto-compact.bak")
        assert kinds.count("agent_start") == 2 and kinds[-1] == "agent_settled"
        assert kinds.index("compaction_end") < len(kinds) - 1 - kinds[::-1].index("agent_start")
        assert not of_type(events, "auto_retry_start")  # overflow is never auto-retried
        # the retry's context: the compaction message (with the kept tail), no failed reply
        context = host.faux_calls()[-1]["context"]["messages"]
        assert len(context) == 1 and "[User]: third" in context[0]["content"][0]["text"]
        messages = (await c.get_messages()).messages
        assert [m["role"] for m in messages] == ["custom", "assistant"]
        assert messages[-1]["content"][0]["text"] == "recovered answer"
        host.assert_protocol_lines()


async def test_second_overflow_is_unresolved_and_fresh_rung() -> None:
    async with start_host() as host:
        c = host.client
        await seed(host)
        # the planner's answer is unusable: the fresh rung deletes the whole region
        host.faux.push(OVERFLOW, "no ranges here", OVERFLOW)
        events = await c.prompt_and_wait("third")
        ends = of_type(events, "compaction_end")
        assert len(ends) == 2 and len(of_type(events, "compaction_start")) == 2
        first, second = ends
        assert first["result"]["rung"] == "fresh" and first["willRetry"] is True
        assert first["result"]["compactedText"] == "(filtered 34 lines)"  # u1, a1, u2
        assert second["result"] is None and second["unresolvedOverflow"] is True and second["willRetry"] is False
        assert second["errorMessage"].startswith(
            "Context overflow recovery failed after one compact-and-retry attempt."
        )
        # a new user turn may recover again; a tiny region goes straight to the fresh rung
        host.faux.push(OVERFLOW, "fine now")
        events = await c.prompt_and_wait("fourth")
        [end] = of_type(events, "compaction_end")
        assert end["result"]["rung"] == "fresh" and end["willRetry"] is True
        assert of_type(events, "message_end")[-1]["message"]["content"][0]["text"] == "fine now"
        host.assert_protocol_lines()


async def test_abort_cancels_automatic_compaction() -> None:
    async with start_host() as host:
        c = host.client
        await seed(host)
        host.faux.push({"content": "big answer", "usage": BIG}, {"content": "1,5", "delayMs": 20000})
        start = len(c.events)
        await c.prompt("third")
        await c.wait_for_event("compaction_start", after=start)
        assert (await c.get_state())["isCompacting"] is True
        await c.call("abort")
        await c.wait_for_idle(after=start)
        [end] = of_type(c.events[start:], "compaction_end")
        assert end["aborted"] is True and end["result"] is None and "errorMessage" not in end
        assert (await c.get_state())["isCompacting"] is False
        host.assert_protocol_lines()


async def test_fresh_rung_drops_a_tail_larger_than_the_window(tmp_path) -> None:
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    overrides = {"providers": {"faux": {"modelOverrides": {"faux-1": {"contextWindow": 10000}}}}}
    (agent_dir / "models.json").write_text(json.dumps(overrides))
    async with start_host(base=tmp_path, settings={"compaction": {"reserveTokens": 100}}) as host:
        c = host.client
        host.faux.push("ok")
        await c.prompt_and_wait("hi")
        host.faux.push(OVERFLOW, "done")
        events = await c.prompt_and_wait("x" * 50_000)
        [end] = of_type(events, "compaction_end")
        result = end["result"]
        assert result["rung"] == "fresh" and result["firstKeptEntryId"] is None and end["willRetry"] is True
        assert result["compactedText"] == "(filtered 1 lines)"
        entry = file_entries(session_file(host))[-2]
        assert entry["type"] == "compaction" and entry["firstKeptEntryId"] is None
        context = host.faux_calls()[-1]["context"]["messages"]
        assert len(context) == 1 and "x" * 100 not in context[0]["content"][0]["text"]
        host.assert_protocol_lines()
