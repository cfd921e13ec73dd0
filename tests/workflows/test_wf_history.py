"""History over RPC: the error texts for a short and an unknown run id, project scoping (two
project directories sharing one agent dir, so one SQLite system database), status filters."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from wf_helpers import QUIET, TWO_STAGES, wait_run, write_workflow

from atomic_host.client import RpcError
from atomic_host.testing import start_host

pytestmark = pytest.mark.slow  # DBOS launched in each host


async def test_run_ids_are_checked_with_the_seed_texts(tmp_path: Path) -> None:
    async with start_host(base=tmp_path, settings=QUIET) as host:
        c = host.client
        with pytest.raises(RpcError) as short:
            await c.call("get_workflow_run_summary", runId="abc123")
        assert short.value.response["error"] == 'Run id must be a full 36-character UUID; got "abc123" (6 chars).'
        unknown = str(uuid.uuid4())
        with pytest.raises(RpcError) as missing:
            await c.call("get_workflow_run_summary", runId=unknown)
        assert missing.value.response["error"] == f"Run not found: {unknown}"
        assert (await c.call("list_workflow_runs"))["runs"] == []
        host.assert_protocol_lines()


async def run_one(base: Path, cwd: Path, text: str, extra: tuple[str, ...] = ()) -> str:
    async with start_host(*extra, base=base, cwd=cwd, settings=QUIET) as host:
        host.faux.push("plan for " + text, "review for " + text)
        mark = len(host.client.events)
        await host.client.call("prompt", message=f"/workflow plan-review {text}")
        return (await wait_run(host.client, "completed", after=mark))["runId"]


async def test_each_project_sees_only_its_own_runs(tmp_path: Path) -> None:
    write_workflow(tmp_path / "agent" / "workflows", "plan-review", TWO_STAGES)
    first = await run_one(tmp_path, tmp_path / "alpha", "one")
    second = await run_one(tmp_path, tmp_path / "beta", "two")
    assert (tmp_path / "agent" / "workflows.sqlite").exists()
    async with start_host(base=tmp_path, cwd=tmp_path / "alpha", settings=QUIET) as host:
        c = host.client
        runs = (await c.call("list_workflow_runs"))["runs"]
        assert [(r["runId"], r["status"], r["name"]) for r in runs] == [(first, "completed", "plan-review")]
        assert runs[0]["label"] == "plan-review: one"
        assert runs[0]["summary"].startswith("2/2 stages done; review: review for one")
        assert (await c.call("list_workflow_runs", status="completed"))["runs"] == runs
        assert (await c.call("list_workflow_runs", status="all"))["runs"] == runs
        assert (await c.call("list_workflow_runs", status="failed"))["runs"] == []
        assert (await c.call("get_workflow_run_summary", runId=first))["status"] == "completed"
        with pytest.raises(RpcError) as other:
            await c.call("get_workflow_run_summary", runId=second)  # another project's run
        assert other.value.response["error"] == f"Run not found: {second}"
        host.assert_protocol_lines()
