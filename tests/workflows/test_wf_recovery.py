"""Recovery that recovers: SIGKILL the host in the middle of stage 2, start it again on the same
session (``--continue``); nothing resumes by itself; ``start_pending_recovery`` resumes the run
from its last completed step: stage 1 is not requested again, stage 2 starts over, the run
completes, and the report counts it (and says the same when repeated)."""

from __future__ import annotations

from pathlib import Path

import pytest
from wf_helpers import QUIET, TWO_STAGES, crash_mid_stage_two, recover_and_complete, write_workflow

from atomic_host.testing import start_host

pytestmark = pytest.mark.slow  # hosts killed with SIGKILL and started again


async def test_sigkill_mid_stage_two_then_recovery_resumes_at_stage_two(tmp_path: Path) -> None:
    write_workflow(tmp_path / "agent" / "workflows", "plan-review", TWO_STAGES)
    run_id = await crash_mid_stage_two(tmp_path, QUIET)
    await recover_and_complete(tmp_path, run_id, QUIET, {})


async def test_recovery_with_nothing_pending_imports_nothing(tmp_path: Path) -> None:
    async with start_host(settings=QUIET) as host:
        report = await host.client.call("start_pending_recovery")
        assert report == {"replayed": 0, "dropped": 0, "completions": 0, "notices": []}
        assert not (host.agent_dir / "workflows.sqlite").exists()
