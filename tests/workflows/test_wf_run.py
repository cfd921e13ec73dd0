"""A two-stage TOML workflow end to end through the real ``atomic --mode rpc``: ``/workflow`` in
``get_commands`` and its listing, a run that answers ``handled`` at once, two internal stage
sessions (hidden from ``list_sessions``), notify progress, ``workflow_run_update`` events, the
second stage's prompt built from the first stage's output, the final custom message, the run
in ``list_workflow_runs`` / ``get_workflow_run_summary``."""

from __future__ import annotations

from pathlib import Path

from wf_helpers import QUIET, TWO_STAGES, calls_for, header_of, notices, of_type, user_texts, wait_run, write_workflow

from atomic_host.testing import read_jsonl, start_host


async def test_a_two_stage_workflow_runs_end_to_end(tmp_path: Path) -> None:
    write_workflow(tmp_path / "agent" / "workflows", "plan-review", TWO_STAGES)
    async with start_host(base=tmp_path, settings=QUIET) as host:
        c = host.client
        host.faux.push("hello there")
        await c.prompt_and_wait("hi")  # the owner session is saved
        commands = {cmd["name"]: cmd for cmd in (await c.call("get_commands"))["commands"]}
        assert commands["workflow"]["source"] == "extension"

        mark = len(c.events)
        assert (await c.call("prompt", message="/workflow"))["disposition"] == "handled"
        await c.wait_for_event(lambda e: e.get("method") == "notify", after=mark)
        listing = notices(c.events[mark:])[0]
        assert "plan-review - Plan, then review the plan (plan -> review)" in listing

        host.faux.push({"content": "1. read 2. write", "delayMs": 200}, "risk: none")
        mark = len(c.events)
        answer = await c.call("prompt", message="/workflow plan-review add a cache")
        assert answer["disposition"] == "handled"
        assert not calls_for(host.faux_log, "Make a short plan")  # answered before the first stage ran
        ended = await wait_run(c, "completed", after=mark)
        run_id = ended["runId"]
        events = c.events[mark:]

        updates = [(e["status"], e.get("stage")) for e in of_type(events, "workflow_run_update")]
        assert updates[0] == ("pending", None)
        assert ("running", "plan") in updates and ("running", "review") in updates
        assert updates[-1] == ("completed", None)
        said = notices(events)
        assert any('stage 1/2 "plan" started' in n for n in said)
        assert any('stage 2/2 "review" done' in n for n in said)
        assert not of_type(events, "agent_start")  # stage runs never stream to the client

        (plan,) = calls_for(host.faux_log, "Make a short plan for: add a cache")
        (review,) = calls_for(host.faux_log, "Review this plan")
        assert user_texts(review)[0] == "Review this plan and list its risks:\n1. read 2. write"
        assert plan["options"]["session_id"] != review["options"]["session_id"]

        final = await c.wait_for_event(
            lambda e: e.get("type") == "message_end" and e["message"].get("customType") == "workflow", after=mark
        )
        assert final["message"]["display"] is True
        assert "risk: none" in final["message"]["content"]
        assert final["message"]["details"] == {"runId": run_id, "name": "plan-review", "status": "completed"}

        sessions = (await c.call("list_sessions"))["sessions"]
        assert len(sessions) == 1  # the two stage sessions are internal

        detail = await c.call("get_workflow_run_summary", runId=run_id)
        assert detail["status"] == "completed" and detail["name"] == "plan-review"
        assert [s["name"] for s in detail["stages"]] == ["plan", "review"]
        assert all(s["status"] == "completed" for s in detail["stages"])
        assert detail["summary"].startswith("2/2 stages done; review: risk: none")
        assert isinstance(detail["summarizedThrough"], int)
        for index, stage in enumerate(detail["stages"]):
            header = header_of(stage["sessionFile"])
            assert header["internal"] is True
            assert header["workflow"] == {"runId": run_id, "stageId": stage["id"], "stageName": stage["name"]}
            assert stage["model"] == "faux/faux-1" and stage["startedAt"] <= stage["endedAt"]
            stored = [r for r in read_jsonl(stage["sessionFile"]) if r.get("type") == "message"]
            assert stored[-1]["message"]["role"] == "assistant", index
        runs = (await c.call("list_workflow_runs"))["runs"]
        assert [r["runId"] for r in runs] == [run_id]
        assert set(runs[0]) <= {"runId", "name", "status", "label", "identity", "summary", "summarizedThrough"}
        host.assert_protocol_lines()
