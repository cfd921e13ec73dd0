"""Startup stays as it was with workflows installed and defined: ``dbos`` (and the engine) are
imported only when a workflow feature is first used; listing definitions and an empty history
import no dbos either."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wf_helpers import QUIET, TWO_STAGES, notices, wait_run, write_workflow

from atomic_host.testing import start_host

PROBE = """
import sys
from atomic_host import hookimpl, SlashCommand


def probe(args, api):
    api.ui.notify("loaded: " + ",".join(m for m in ("dbos", "builtin_plugins.workflows.engine") if m in sys.modules))


@hookimpl
def register_commands(register):
    register(SlashCommand(name="probe", handler=probe))
"""


async def loaded(c: Any) -> str:
    mark = len(c.events)
    await c.call("prompt", message="/probe")
    await c.wait_for_event(lambda e: str(e.get("message", "")).startswith("loaded:"), after=mark)
    return next(n for n in notices(c.events[mark:]) if n.startswith("loaded:"))


async def test_dbos_is_imported_on_first_use_only(tmp_path: Path) -> None:
    write_workflow(tmp_path / "agent" / "workflows", "plan-review", TWO_STAGES)
    (tmp_path / "probe.py").write_text(PROBE)
    async with start_host("-e", str(tmp_path / "probe.py"), base=tmp_path, settings=QUIET) as host:
        c = host.client
        await c.call("get_state")
        assert await loaded(c) == "loaded: "
        assert (await c.call("list_workflow_runs"))["runs"] == []
        await c.call("start_pending_recovery")
        mark = len(c.events)
        await c.call("prompt", message="/workflow")
        await c.wait_for_event(lambda e: e.get("method") == "notify", after=mark)
        assert await loaded(c) == "loaded: builtin_plugins.workflows.engine"  # no dbos yet
        host.faux.push("p", "r")
        mark = len(c.events)
        await c.call("prompt", message="/workflow plan-review x")
        await wait_run(c, "completed", after=mark)
        assert await loaded(c) == "loaded: dbos,builtin_plugins.workflows.engine"
