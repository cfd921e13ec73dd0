"""Workflows with many hosts on one PostgreSQL (issue 26), through real processes: "machines"
with their own HOME, agent dir and hostname (``unshare --uts`` where permitted) sharing one
session directory, and a mock model server that counts requests per stage and per machine.

- a host killed in stage 2 is recovered by another machine with no command, once;
- two machines recovering the same run at the same moment start its stage once (20 times);
- hosts of other projects never run a project's stage; restarts add no queue; an idle host is cheap.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from wf_helpers import Postgres, postgres_server
from wf_machines import Machine, MockModel, can_unshare, cpu_seconds, finals_in, sql, stop, until

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def postgres() -> Iterator[Postgres]:
    yield from postgres_server()


@pytest.fixture
def mock() -> Iterator[MockModel]:
    server = MockModel()
    try:
        yield server
    finally:
        server.stop()


def machines(tmp_path: Path, mock: MockModel, url: str, *names: str) -> list[Machine]:
    uts = can_unshare()
    if not uts:
        print("NOTE: unshare --uts is not permitted here: the machines share this hostname")
    sessions = tmp_path / "shared-sessions"
    sessions.mkdir(exist_ok=True)
    return [Machine(tmp_path, name, mock, url, sessions, uts) for name in names]


async def start_run(client, input_text: str) -> tuple[str, str, str]:
    """A first exchange (the session is written), then ``/workflow three <input>``: (run id,
    session id, session file)."""
    await client.prompt_and_wait("hello there")
    state = await client.call("get_state")
    await client.call("prompt", message=f"/workflow three {input_text}")
    started = await client.wait_for_event(
        lambda e: e.get("type") == "workflow_run_update" and e.get("status") == "pending", timeout=30
    )
    return started["runId"], state["sessionId"], state["sessionLocation"]


async def test_killed_host_recovered_by_another_machine_without_a_command(
    postgres: Postgres, tmp_path: Path, mock: MockModel
) -> None:
    url = postgres.url("recover_alone")
    a, b = machines(tmp_path, mock, url, "alpha", "beta")
    project = tmp_path / "project"
    project.mkdir()
    mock.hold.add(("STAGE-2", "kill"))
    async with a.host(project) as client:
        await client.call("list_workflow_runs")  # DBOS launched before the worker listens too
        worker = await b.worker(project)
        try:
            run_id, session_id, session_file = await start_run(client, "kill")
            await until(lambda: mock.count("STAGE-2 kill") == 1)
            assert mock.by_key("STAGE") == {a.key: 2}  # alpha runs its own run
            assert client.proc is not None
            client.proc.kill()
            killed = time.time()
            await client.proc.wait()
            mock.hold.clear()
            await until(lambda: mock.count("STAGE-2 kill") == 2, timeout=20)
            recovered_after = mock.first_time("STAGE-2 kill", after=killed) - killed
            await until(lambda: finals_in(session_file, run_id) == 1, timeout=20)
            await asyncio.sleep(1.5)  # nothing more comes
            assert mock.count("STAGE-1 kill") == 1  # stage 1 not run again
            assert mock.count("STAGE-2 kill") == 2  # stage 2 once more
            assert mock.count("STAGE-3 kill") == 1
            assert mock.by_key("STAGE-3") == {b.key: 1}
            assert finals_in(session_file, run_id) == 1  # the owner got the final message once
            assert recovered_after < 2.0, recovered_after
            print(f"recovered {recovered_after:.2f} s after SIGKILL")
        finally:
            await stop(worker)
    async with a.host(project, "--session", session_id) as again:  # the record says so too
        detail = await again.call("get_workflow_run_summary", runId=run_id)
        assert detail["status"] == "completed"
        assert [s["status"] for s in detail["stages"]] == ["completed"] * 3
        assert detail["output"] == "out-3-kill"
        report = await again.call("start_pending_recovery")
        assert report["completions"] == 0 and report.get("resumed", 0) == 0
    assert finals_in(session_file, run_id) == 1
    assert os.stat(session_file).st_size > 0
