"""Definitions: a broken TOML file (bad syntax, an unknown placeholder) is reported with its path
and line by ``extension_error`` and ``/workflow`` and never stops the host; project files win by
name in a trusted project only; Python definitions from ``register_workflows`` with a Python step;
``api.workflows`` for extensions; ``/workflow cancel``."""

from __future__ import annotations

from pathlib import Path

import pytest
from wf_helpers import QUIET, TWO_STAGES, calls_for, notices, of_type, user_texts, wait_run, write_workflow

from atomic_host.testing import start_host

pytestmark = pytest.mark.slow  # DBOS launched in each host

BAD_SYNTAX = 'description = "x"\n[[stages]]\nname = "plan"\nprompt = "unclosed\n'
BAD_PLACEHOLDER = """\
[[stages]]
name = "plan"
prompt = "Plan {input}"
[[stages]]
name = "review"
prompt = "Review {stages.nope.output}"
"""


async def test_broken_files_are_reported_with_path_and_line(tmp_path: Path) -> None:
    wf_dir = tmp_path / "agent" / "workflows"
    syntax = write_workflow(wf_dir, "syntax", BAD_SYNTAX)
    placeholder = write_workflow(wf_dir, "placeholder", BAD_PLACEHOLDER)
    write_workflow(wf_dir, "plan-review", TWO_STAGES)
    async with start_host(base=tmp_path, settings=QUIET) as host:
        c = host.client
        host.faux.push("still working")
        await c.prompt_and_wait("hi")  # the host serves prompts
        errors = {e["extensionPath"]: e for e in of_type(c.events, "extension_error")}
        assert errors[str(syntax)]["event"] == "workflow"
        assert errors[str(syntax)]["error"].startswith(f"{syntax}:4: invalid TOML")
        assert errors[str(placeholder)]["error"] == (
            f'{placeholder}:6: stage "review": unknown placeholder {{stages.nope.output}} '
            '(stage "nope" is not an earlier stage)'
        )
        mark = len(c.events)
        await c.call("prompt", message="/workflow")
        await c.wait_for_event(lambda e: e.get("method") == "notify", after=mark)
        (listing,) = notices(c.events[mark:])
        assert "plan-review" in listing and f"{syntax}:4" in listing and f"{placeholder}:6" in listing
        host.assert_protocol_lines()


async def test_project_workflows_win_by_name_only_when_trusted(tmp_path: Path) -> None:
    write_workflow(tmp_path / "agent" / "workflows", "plan-review", TWO_STAGES)
    project = TWO_STAGES.replace("Make a short plan for", "Project plan for")
    write_workflow(tmp_path / "work" / ".atomic" / "workflows", "plan-review", project)
    for flag, needle in (("--no-approve", "Make a short plan for"), ("--approve", "Project plan for")):
        async with start_host(flag, base=tmp_path, settings=QUIET) as host:
            host.faux.push("p", "r")
            mark = len(host.client.events)
            await host.client.call("prompt", message="/workflow plan-review x")
            await wait_run(host.client, "completed", after=mark)
            assert calls_for(host.faux_log, needle), flag


EXTENSION = """
from atomic_host import hookimpl, SlashCommand
from atomic_host.contract.registrations import WorkflowDefinition


async def shout(ctx):
    return ctx.outputs["draft"].upper() + " / " + ctx.input


@hookimpl
def register_workflows(register):
    register(WorkflowDefinition(name="shouty", description="Draft, then shout", steps=[
        {"name": "draft", "prompt": "Draft: {input}"},
        {"name": "shout", "run": shout},
    ]))


async def start(args, api):
    run_id = await api.workflows.start("shouty", args)
    api.ui.notify("api started " + run_id)


@hookimpl
def register_commands(register):
    register(SlashCommand(name="via-api", handler=start))
"""


async def test_python_workflows_and_the_extension_api(tmp_path: Path) -> None:
    ext = tmp_path / "ext.py"
    ext.write_text(EXTENSION)
    async with start_host("-e", str(ext), base=tmp_path, settings=QUIET) as host:
        c = host.client
        host.faux.push("a small draft")
        mark = len(c.events)
        await c.call("prompt", message="/via-api go")
        ended = await wait_run(c, "completed", after=mark)
        assert any(n == "api started " + ended["runId"] for n in notices(c.events[mark:]))
        (draft,) = calls_for(host.faux_log, "Draft: go")
        assert user_texts(draft) == ["Draft: go"]
        detail = await c.call("get_workflow_run_summary", runId=ended["runId"])
        assert [(s["name"], s["status"]) for s in detail["stages"]] == [("draft", "completed"), ("shout", "completed")]
        assert detail["output"] == "A SMALL DRAFT / go"
        mark = len(c.events)
        await c.call("prompt", message="/workflow")
        await c.wait_for_event(lambda e: e.get("method") == "notify", after=mark)
        assert "shouty - Draft, then shout (draft -> shout)" in notices(c.events[mark:])[0]
        host.assert_protocol_lines()


async def test_cancel_stops_the_running_stage(tmp_path: Path) -> None:
    """The run ends by itself, recorded as cancelled (the next process says so too), and DBOS
    logs nothing: cancelling a workflow under a running step made it log a traceback."""
    write_workflow(tmp_path / "agent" / "workflows", "plan-review", TWO_STAGES)
    stderr = tmp_path / "stderr.txt"
    with stderr.open("wb") as err:
        async with start_host(base=tmp_path, settings=QUIET, stderr=err.fileno()) as host:
            c = host.client
            host.faux.push({"content": "slow", "delayMs": 30000})
            mark = len(c.events)
            await c.call("prompt", message="/workflow plan-review x")
            running = await c.wait_for_event(
                lambda e: e.get("type") == "workflow_run_update" and e["status"] == "running", after=mark
            )
            await c.call("prompt", message=f"/workflow cancel {running['runId']}")
            await wait_run(c, "cancelled", after=mark, timeout=10)
            detail = await c.call("get_workflow_run_summary", runId=running["runId"])
            assert detail["status"] == "cancelled"
            assert calls_for(host.faux_log, "Review") == []
            host.assert_protocol_lines()
        async with start_host(base=tmp_path, settings=QUIET, stderr=err.fileno()) as host:
            detail = await host.client.call("get_workflow_run_summary", runId=running["runId"])
            assert detail["status"] == "cancelled"
            assert (await host.client.call("start_pending_recovery"))["completions"] == 0
    logged = stderr.read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in logged and "ERROR" not in logged, logged
