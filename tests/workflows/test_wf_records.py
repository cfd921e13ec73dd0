"""Run records are data (issue 26): DBOS writes them as JSON with known credentials masked, a
crafted row that holds a pickle is never loaded (reading the run runs no code, and the error names
the run), and the SQLite database is private (0600, lease directory 0700). SQLite here; the same
crafted row on PostgreSQL is in test_wf_scale.py."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import pytest
from wf_helpers import QUIET, TWO_STAGES, pickled, wait_run, write_workflow

from atomic_host.client import RpcError
from atomic_host.testing import start_host

pytestmark = pytest.mark.slow  # DBOS launched in each host

KEY = "sk-test-runrecord-0123456789abcdef"


async def one_run(tmp_path: Path, text: str) -> str:
    async with start_host(base=tmp_path, settings=QUIET, env={"ANTHROPIC_API_KEY": KEY}) as host:
        host.faux.push("hello", "plan: " + text, "review: " + text)
        await host.client.prompt_and_wait("hi")
        mark = len(host.client.events)
        await host.client.call("prompt", message=f"/workflow plan-review {text}")
        return (await wait_run(host.client, "completed", after=mark))["runId"]


def craft(db: Path, statement: str, *params: object) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute(statement, params).rowcount


async def test_records_are_masked_json_in_a_private_file(tmp_path: Path) -> None:
    write_workflow(tmp_path / "agent" / "workflows", "plan-review", TWO_STAGES)
    await one_run(tmp_path, f"use the key {KEY} here")
    db = tmp_path / "agent" / "workflows.sqlite"
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    leases = tmp_path / "agent" / "workflows.leases"
    assert stat.S_IMODE(leases.stat().st_mode) == 0o700
    data = b"".join(p.read_bytes() for p in db.parent.glob("workflows.sqlite*"))
    assert KEY.encode() not in data  # masked, as in session files
    with sqlite3.connect(db) as conn:
        kinds = {row[0] for row in conn.execute("SELECT serialization FROM workflow_status")}
        kinds |= {row[0] for row in conn.execute("SELECT serialization FROM operation_outputs")}
        inputs = conn.execute("SELECT inputs FROM workflow_input").fetchone()[0]
    assert kinds == {"atomic-json"}
    assert "plan-review" in inputs and KEY not in inputs


@pytest.mark.parametrize("where", ["input", "step"])
async def test_a_crafted_pickle_row_runs_no_code(tmp_path: Path, where: str) -> None:
    write_workflow(tmp_path / "agent" / "workflows", "plan-review", TWO_STAGES)
    run_id = await one_run(tmp_path, "crafted")
    db = tmp_path / "agent" / "workflows.sqlite"
    marker = tmp_path / "pwned"
    if where == "input":
        assert craft(db, "UPDATE workflow_input SET inputs = ? WHERE workflow_uuid = ?", pickled(marker), run_id) == 1
        assert craft(db, "UPDATE workflow_status SET serialization = 'py_pickle' WHERE workflow_uuid = ?", run_id) == 1
    else:
        assert craft(db, "UPDATE operation_outputs SET output = ?, serialization = 'py_pickle' "
                         "WHERE workflow_uuid = ?", pickled(marker), run_id) == 3  # fmt: skip (2 stages, finish)
    async with start_host("--continue", base=tmp_path, settings=QUIET) as host:
        c = host.client
        runs = (await c.call("list_workflow_runs"))["runs"]
        assert run_id not in [r["runId"] for r in runs]  # left out of the listing, not loaded
        with pytest.raises(RpcError) as unreadable:
            await c.call("get_workflow_run_summary", runId=run_id)
        error = unreadable.value.response["error"]
        assert error.startswith(f"Run {run_id}: ") and "cannot be read" in error, error
        report = await c.call("start_pending_recovery")
        assert report["completions"] == 0
        host.faux.push("still serving")
        await c.prompt_and_wait("and now?")  # the host keeps serving
        host.assert_protocol_lines()
    assert not marker.exists()  # no code ran
