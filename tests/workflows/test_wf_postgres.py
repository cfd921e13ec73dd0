"""The same durability on a real PostgreSQL server (``DBOS_SYSTEM_DATABASE_URL``): SIGKILL mid
stage 2 and recovery; two hosts (different agent dirs and projects) on one database each see only
their project's runs. The fixture initialises Debian's PostgreSQL in a temp dir (.ci/run installs
the package); without it these tests skip and say why."""

from __future__ import annotations

from pathlib import Path

import pytest
from wf_helpers import (
    QUIET,
    TWO_STAGES,
    Postgres,
    crash_mid_stage_two,
    recover_and_complete,
    wait_run,
    write_workflow,
)

from atomic_host.testing import start_host

pytestmark = pytest.mark.slow  # a real PostgreSQL server


async def test_sigkill_and_recovery_on_postgres(postgres_server: Postgres, tmp_path: Path) -> None:
    env = {"DBOS_SYSTEM_DATABASE_URL": postgres_server.url("durability")}
    write_workflow(tmp_path / "agent" / "workflows", "plan-review", TWO_STAGES)
    run_id = await crash_mid_stage_two(tmp_path, QUIET, env)
    await recover_and_complete(tmp_path, run_id, QUIET, env)
    assert not (tmp_path / "agent" / "workflows.sqlite").exists()  # the runs live in PostgreSQL


async def test_two_hosts_on_one_database_see_only_their_project(postgres_server: Postgres, tmp_path: Path) -> None:
    settings = {**QUIET, "workflows": {"databaseUrl": postgres_server.url("shared")}}  # the setting, not the env
    ids = {}
    hosts = {}
    for name in ("alpha", "beta"):
        write_workflow(tmp_path / name / "agent" / "workflows", "plan-review", TWO_STAGES)
    async with (
        start_host(base=tmp_path / "alpha", settings=settings) as alpha,
        start_host(base=tmp_path / "beta", settings=settings) as beta,
    ):
        hosts = {"alpha": alpha, "beta": beta}
        for name, host in hosts.items():
            host.faux.push(f"plan {name}", f"review {name}")
            mark = len(host.client.events)
            await host.client.call("prompt", message=f"/workflow plan-review {name}")
            ids[name] = (await wait_run(host.client, "completed", after=mark))["runId"]
        for name, host in hosts.items():
            runs = (await host.client.call("list_workflow_runs"))["runs"]
            assert [r["runId"] for r in runs] == [ids[name]], name
    async with start_host(base=tmp_path / "alpha", settings=settings) as again:  # from the database, not memory
        runs = (await again.client.call("list_workflow_runs"))["runs"]
        assert [(r["runId"], r["status"]) for r in runs] == [(ids["alpha"], "completed")]
