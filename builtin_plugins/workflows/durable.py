"""The DBOS side: one durable workflow function, a step per stage, launched on first use.

Imported only when a workflow feature is first used (``dbos`` takes ~0.5-2 s to import). Every
run is the workflow ``atomic.workflow`` with one JSON argument, the run's spec (name, input, owner
session, project directory, model, the stages). Each stage is the step ``atomic.stage``: DBOS
records its result, so a recovered run skips the stages that finished and starts over at the one
that did not.

Routing: a run starts in the process that starts it, and records its project's queue
(:func:`queue_name`, one per project directory) as an attribute. A recovered run is put on that
queue, and a process listens only to the queues of the projects it serves (``DBOS.listen_queues``),
so a host never runs another project's stage, and the number of queues is the number of projects
however many hosts come and go. Recovery is DBOS's own guarded re-enqueue (:func:`recover`), so
two processes recovering at once start each run once.

Records are data: inputs, outputs and step results are written as JSON by
:class:`RecordSerializer` (known credentials masked), and DBOS's pickle reader is replaced by one
that refuses (:func:`_refuse_pickle`), so a crafted row runs no code in the host that reads it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sys
from typing import TYPE_CHECKING, Any

import dbos._serialization as dbos_serialization
from dbos import DBOS, SetWorkflowAttributes, SetWorkflowID
from dbos._dbos import _get_dbos_instance
from dbos._serialization import Serializer

from atomic_host.kit import secrets
from atomic_host.kit.database import CLIENT_KEEPALIVES

if TYPE_CHECKING:
    from builtin_plugins.workflows.engine import WorkflowEngine

WORKFLOW = "atomic.workflow"
APP_VERSION = "atomic-workflows-2"
"""Fixed, so a run started by one version of the host can be recovered by the next (DBOS would
otherwise hash the workflow code into the version and refuse runs of other versions). Version 1
pickled its records and ran outside project queues: its runs are not recovered by this one."""
QUEUE_PREFIX = "atomic-project-"
PROJECT = "atomicProject"
"""The attribute of a run that names its project's queue."""
POLL_S = 0.5
"""How often a listener looks for new runs on a project queue (one short transaction each)."""
POOL_SIZE = 6
"""At most this many connections to the system database per process (DBOS's default is 20;
an idle process holds ~4: queue threads, sweep, listing)."""

_engine: WorkflowEngine | None = None
_on_sqlite = False


class UnreadableRecord(Exception):
    """A stored value that is not the JSON this plugin writes (a pickle, or garbage)."""


class RecordError(Exception):
    """An exception as stored by :class:`RecordSerializer`: its type name and message, nothing else."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class RecordSerializer(Serializer):
    """What DBOS writes for this application: JSON, with the host's known credentials masked
    (as in session files); an exception is stored as its type name and message."""

    def name(self) -> str:
        return "atomic-json"

    def serialize(self, data: Any) -> str:
        if isinstance(data, BaseException):
            data = {"$error": {"type": type(data).__name__, "message": str(data)}}
        return json.dumps(secrets.mask_obj(data), ensure_ascii=False, allow_nan=False, separators=(",", ":"))

    def deserialize(self, serialized_data: str) -> Any:
        try:
            value = json.loads(serialized_data)
        except (TypeError, ValueError) as exc:
            raise UnreadableRecord(f"not JSON ({exc})") from None
        if isinstance(value, dict) and isinstance(value.get("$error"), dict):
            error = value["$error"]
            return RecordError(str(error.get("type", "Error")), str(error.get("message", "")))
        return value


class _NoPickle(Serializer):
    """Stands in for DBOS's pickle serializer: a row that says it holds a pickle is refused, never loaded."""

    def name(self) -> str:
        return "py_pickle"

    def serialize(self, data: Any) -> str:
        raise UnreadableRecord("this host writes no pickled records")

    def deserialize(self, serialized_data: str) -> Any:
        raise UnreadableRecord("a pickled record (refused: reading it could run code)")


def _refuse_pickle() -> None:
    # DBOS loads a value with pickle whenever its row's serialization column says "py_pickle",
    # whatever serializer the application chose; its readers look this name up at call time.
    dbos_serialization.DBOSDefaultSerializer = _NoPickle()


def queue_name(cwd: str) -> str:
    """The queue of a project: one per project directory, shared by every host that serves it."""
    return QUEUE_PREFIX + hashlib.sha256(cwd.encode("utf-8", "surrogateescape")).hexdigest()[:24]


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


def launch(engine: WorkflowEngine, url: str, executor_id: str, projects: list[str]) -> None:
    """Configure and launch DBOS listening to the queues of ``projects`` (blocking: call it in a
    thread). Its logs go to stderr."""
    global _engine, _on_sqlite
    _engine, _on_sqlite = engine, url.startswith("sqlite:")
    _refuse_pickle()
    logger = logging.getLogger("dbos")
    for handler in logger.handlers:
        if isinstance(handler, logging.StreamHandler) and getattr(handler, "stream", None) is sys.stdout:
            handler.setStream(sys.stderr)  # stdout carries the protocol
    config: dict[str, Any] = {
        "name": "atomic-host",
        "system_database_url": url,
        "executor_id": executor_id,
        "application_version": APP_VERSION,
        "log_level": "WARNING",
        "serializer": RecordSerializer(),
    }
    if not _on_sqlite:
        config["db_engine_kwargs"] = {
            # No ping before each use (it doubled an idle host's transactions); TCP keepalives
            # find a dead connection instead, and DBOS retries an operation that hit one.
            "pool_pre_ping": False,
            "pool_size": POOL_SIZE,
            "max_overflow": 0,
            "pool_timeout": 30,
            "connect_args": {**CLIENT_KEEPALIVES, "application_name": f"atomic:{executor_id}"[:63]},
        }
    DBOS(config=config)  # type: ignore[arg-type]
    queues = [queue_name(p) for p in projects]
    DBOS.listen_queues(queues)
    DBOS.launch()
    for name in queues:  # one row per project, written once per database and kept
        DBOS.register_queue(name, polling_interval_sec=POLL_S, on_conflict="never_update")


async def start(spec: dict[str, Any]) -> Any:
    """Start a run here, at once (no queue wait); its project is recorded with it, so a
    recovery puts it on that project's queue."""
    with SetWorkflowID(spec["runId"]), SetWorkflowAttributes({PROJECT: queue_name(spec["cwd"])}):
        return await DBOS.start_workflow_async(atomic_workflow, spec)


async def list_runs(cwd: str, limit: int = 200) -> list[Any]:
    """The runs of one project, newest first (DBOS filters by attribute on PostgreSQL only: on
    SQLite, one machine's database, the latest runs are filtered here)."""
    project = queue_name(cwd)
    if not _on_sqlite:
        return await DBOS.list_workflows_async(
            name=WORKFLOW, attributes={PROJECT: project}, sort_desc=True, limit=limit, load_output=True
        )
    runs = await DBOS.list_workflows_async(name=WORKFLOW, sort_desc=True, limit=limit * 5, load_output=True)
    return [wf for wf in runs if project_of(wf) == project][:limit]


async def get_run(run_id: str) -> Any:
    runs = await DBOS.list_workflows_async(workflow_ids=[run_id], name=WORKFLOW, load_output=True)
    return runs[0] if runs else None


def project_of(wf: Any) -> str | None:
    """The queue of the project a run belongs to (None: not a run of this version)."""
    attributes = getattr(wf, "attributes", None)
    project = attributes.get(PROJECT) if isinstance(attributes, dict) else None
    return project if isinstance(project, str) and project.startswith(QUEUE_PREFIX) else None


async def pending() -> list[Any]:
    """Every project's runs that some executor has started and not ended (no inputs loaded)."""
    runs = await DBOS.list_workflows_async(status="PENDING", name=WORKFLOW, load_input=False, load_output=False)
    return [r for r in runs if project_of(r) is not None]


async def steps(run_id: str) -> list[dict[str, Any]]:
    """The recorded stage steps of a run; :class:`UnreadableRecord` when one is not a stage
    result (DBOS hands back the raw text of a value it could not read, such as a refused pickle)."""
    found = [s for s in await DBOS.list_workflow_steps_async(run_id) if s.get("function_name") == "atomic.stage"]
    for number, step in enumerate(found, 1):
        if step.get("output") is not None and not isinstance(step["output"], dict):
            raise UnreadableRecord(f"the result of stage {number} is not the JSON this host writes")
    return found


def recover(runs: list[Any]) -> list[str]:
    """DBOS's recovery of dead executors' runs: each goes back to its project's queue with one
    guarded update (still PENDING, still on that executor), so a run is taken over once however
    many processes do this at the same moment. Returns the ids this call re-enqueued."""
    sys_db = _get_dbos_instance()._sys_db
    return [
        wf.workflow_id
        for wf in runs
        if sys_db.reenqueue_for_recovery(wf.workflow_id, [wf.executor_id], project_of(wf) or "")
    ]


async def cancel(run_id: str) -> None:
    await DBOS.cancel_workflow_async(run_id)


def destroy() -> None:
    DBOS.destroy(workflow_completion_timeout_sec=0)
