"""The DBOS side: one durable workflow function, a step per stage, launched on first use.

Imported only when a workflow feature is first used (``dbos`` takes ~0.5-2 s to import). Every
run is the workflow ``atomic.workflow`` with one JSON argument, the run's spec (name, input, owner
session, project directory, the stages). Each stage is the step ``atomic.stage``: DBOS records its
result, so a resumed run skips the stages that finished and starts over at the one that did not.

Each host process is its own DBOS executor (``atomic-<host>-<pid>-<random>``), so DBOS never
recovers another process's runs by itself at launch: recovery is ``start_pending_recovery``'s
job. A resumed run goes through a queue only this process polls.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

from dbos import DBOS, SetWorkflowID

if TYPE_CHECKING:
    from builtin_plugins.workflows.engine import WorkflowEngine

WORKFLOW = "atomic.workflow"
APP_VERSION = "atomic-workflows-1"
"""Fixed, so a run started by one version of the host can be resumed by the next (DBOS would
otherwise hash the workflow code into the version and refuse runs of other versions)."""

_engine: WorkflowEngine | None = None


def _host() -> WorkflowEngine:
    assert _engine is not None, "workflows: DBOS is not launched"
    return _engine


@DBOS.step(name="atomic.stage")
async def stage_step(spec: dict[str, Any], index: int, outputs: dict[str, str]) -> dict[str, Any]:
    engine = _host()
    return await engine.on_host_loop(engine.execute_stage(spec, index, outputs))


@DBOS.step(name="atomic.finish")
async def finish_step(spec: dict[str, Any], result: dict[str, Any]) -> None:
    engine = _host()
    await engine.on_host_loop(engine.finish(spec, result))


@DBOS.workflow(name=WORKFLOW)
async def atomic_workflow(spec: dict[str, Any]) -> dict[str, Any]:
    outputs: dict[str, str] = {}
    result: dict[str, Any] = {"status": "completed", "output": ""}
    for index, stage in enumerate(spec["stages"]):
        step = await stage_step(spec, index, outputs)
        if step.get("status") != "completed":
            result = {
                "status": "cancelled" if step.get("status") == "cancelled" else "failed",
                "error": step.get("errorMessage") or "stage failed",
                "failedStage": stage["name"],
            }
            break
        outputs[stage["name"]] = step.get("output", "")
        result["output"] = outputs[stage["name"]]
    await finish_step(spec, result)
    return result


def launch(engine: WorkflowEngine, url: str, executor_id: str) -> None:
    """Configure and launch DBOS (blocking: call it in a thread). Its logs go to stderr."""
    global _engine
    _engine = engine
    logger = logging.getLogger("dbos")
    for handler in logger.handlers:
        if isinstance(handler, logging.StreamHandler) and getattr(handler, "stream", None) is sys.stdout:
            handler.setStream(sys.stderr)  # stdout carries the protocol
    DBOS(
        config={
            "name": "atomic-host",
            "system_database_url": url,
            "executor_id": executor_id,
            "application_version": APP_VERSION,
            "log_level": "WARNING",
        }
    )
    DBOS.launch()


def register_queue(name: str) -> None:
    DBOS.register_queue(name, polling_interval_sec=0.05)


async def start(spec: dict[str, Any]) -> Any:
    with SetWorkflowID(spec["runId"]):
        return await DBOS.start_workflow_async(atomic_workflow, spec)


async def list_runs(limit: int = 200) -> list[Any]:
    return await DBOS.list_workflows_async(name=WORKFLOW, sort_desc=True, limit=limit, load_output=True)


async def get_run(run_id: str) -> Any:
    runs = await DBOS.list_workflows_async(workflow_ids=[run_id], name=WORKFLOW, load_output=True)
    return runs[0] if runs else None


async def steps(run_id: str) -> list[dict[str, Any]]:
    return [s for s in await DBOS.list_workflow_steps_async(run_id) if s.get("function_name") == "atomic.stage"]


async def resume(run_id: str, queue: str) -> None:
    await DBOS.resume_workflow_async(run_id, queue_name=queue)


async def cancel(run_id: str) -> None:
    await DBOS.cancel_workflow_async(run_id)


def destroy() -> None:
    DBOS.destroy(workflow_completion_timeout_sec=0)
