"""Recovery that recovers: SIGKILL the host in the middle of stage 2, start it again on the same
session (``--continue``); nothing resumes by itself; ``start_pending_recovery`` resumes the run
from its last completed step: stage 1 is not requested again, stage 2 starts over, the run
completes, and the report counts it (and says the same when repeated)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from wf_helpers import QUIET, TWO_STAGES, calls_for, user_texts, wait_run, write_workflow

from atomic_host.testing import FauxScript, start_host


async def _until(predicate: Any, timeout: float = 20) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError("condition not met")
        await asyncio.sleep(0.05)


async def crash_mid_stage_two(tmp_path: Path, settings: dict[str, Any], env: dict[str, str] | None = None) -> str:
    """Run plan-review until stage 2 is at the model, then SIGKILL the host; returns the run id."""
    async with start_host(base=tmp_path, settings=settings, env=env) as host:
        c = host.client
        host.faux.push("hello there")
        await c.prompt_and_wait("hi")
        host.faux.push("1. read 2. write", {"content": "never sent", "delayMs": 60000})
        await c.call("prompt", message="/workflow plan-review add a cache")
        await _until(lambda: calls_for(host.faux_log, "Review this plan"))
        (started,) = [e for e in c.events if e.get("type") == "workflow_run_update" and e["status"] == "pending"]
        runs = (await c.call("list_workflow_runs"))["runs"]
        assert [(r["runId"], r["status"]) for r in runs] == [(started["runId"], "running")]
        assert c.proc is not None
        c.proc.kill()  # SIGKILL: no shutdown hook runs
        await c.proc.wait()
        assert len(calls_for(host.faux_log, "Make a short plan")) == 1
        return started["runId"]


async def recover_and_complete(tmp_path: Path, run_id: str, settings: dict[str, Any], env: dict[str, str]) -> None:
    script = FauxScript(tmp_path / "faux-2.jsonl")
    log = tmp_path / "faux-log-2.jsonl"
    env = {**env, "ATOMIC_FAUX_SCRIPT": str(script.path), "ATOMIC_FAUX_LOG": str(log)}
    async with start_host("--continue", base=tmp_path, settings=settings, env=env) as host:
        c = host.client
        runs = (await c.call("list_workflow_runs"))["runs"]
        assert [(r["runId"], r["status"]) for r in runs] == [(run_id, "crashed")]
        assert [r["runId"] for r in (await c.call("list_workflow_runs", status="crashed"))["runs"]] == [run_id]
        assert (await c.call("list_workflow_runs", status="running"))["runs"] == []
        detail = await c.call("get_workflow_run_summary", runId=run_id)
        assert [(s["name"], s["status"]) for s in detail["stages"]] == [("plan", "completed"), ("review", "crashed")]
        assert detail["summary"].startswith("1/2 stages done; plan: 1. read 2. write")
        await asyncio.sleep(0.5)
        assert not log.exists() or not calls_for(log, "Review")  # nothing resumes by itself

        script.push("risk: none")
        mark = len(c.events)
        report = await c.call("start_pending_recovery", reason="workflow_stage_resume")
        assert report["resumed"] == 1
        assert any(run_id in n and 'stage 2/2 "review"' in n for n in report["notices"])
        await wait_run(c, "completed", after=mark)
        assert calls_for(log, "Make a short plan") == []  # stage 1 was not run again
        (review,) = calls_for(log, "Review this plan")
        assert user_texts(review)[0].endswith("1. read 2. write")  # its input came from the record
        again = await c.call("start_pending_recovery")
        assert again == report
        detail = await c.call("get_workflow_run_summary", runId=run_id)
        assert detail["status"] == "completed"
        assert [(s["name"], s["status"]) for s in detail["stages"]] == [("plan", "completed"), ("review", "completed")]
        ends = [e["message"] for e in c.events[mark:] if e.get("type") == "message_end"]
        final = [m for m in ends if m.get("role") == "custom"]
        assert final and "risk: none" in final[-1]["content"]
        host.assert_protocol_lines()
    async with start_host("--continue", base=tmp_path, settings=settings, env=env) as host:
        runs = (await host.client.call("list_workflow_runs"))["runs"]
        assert [(r["runId"], r["status"]) for r in runs] == [(run_id, "completed")]  # durable, not just live
        assert (await host.client.call("start_pending_recovery"))["notices"] == []


async def test_sigkill_mid_stage_two_then_recovery_resumes_at_stage_two(tmp_path: Path) -> None:
    write_workflow(tmp_path / "agent" / "workflows", "plan-review", TWO_STAGES)
    run_id = await crash_mid_stage_two(tmp_path, QUIET)
    await recover_and_complete(tmp_path, run_id, QUIET, {})


async def test_recovery_with_nothing_pending_imports_nothing(tmp_path: Path) -> None:
    async with start_host(settings=QUIET) as host:
        report = await host.client.call("start_pending_recovery")
        assert report == {"replayed": 0, "dropped": 0, "completions": 0, "notices": []}
        assert not (host.agent_dir / "workflows.sqlite").exists()
