"""The workflow engine: starts, watches, cancels, lists and recovers runs (``api.workflows``).

The durable state is DBOS's (``durable.py``, imported on first use); this module keeps what only
this process knows: the runs it is driving right now (``live``), their stage progress and the
abort signal of the stage that is running. Stages run on the host's event loop, whichever thread
DBOS calls the step from, headless from the run's spec (its project, owner session and model),
whichever session this process has open. Once DBOS is launched, a sweep every 0.5 s recovers the
runs of executors whose lease is gone (``leases.py``), one process at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import socket
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_host.contract.errors import HostError
from atomic_host.contract.results import RecoverResult
from atomic_host.contract.tools import resolve
from atomic_host.kit.database import ENV_URL
from atomic_host.kit.log import log
from builtin_plugins.workflows.definitions import Definition, DefinitionError, discover, render
from builtin_plugins.workflows.leases import Leases, leases_for

if TYPE_CHECKING:
    from atomic_host.contract.events import SessionRecoverEvent
    from atomic_host.contract.host import HostAPI

STATUSES = ("pending", "running", "paused", "blocked", "completed", "failed", "skipped", "cancelled", "killed")
SUMMARY_CHARS = 160
CANCEL_GRACE_S = 5.0
"""How long a cancelled run may take to end by itself before DBOS cancels it."""
SWEEP_S = 0.5
"""How often a process with DBOS launched looks for runs left by dead executors."""
WATCH_S = 0.5
"""How often a run this process waits for (started or resumed here, run anywhere) is looked up."""
RECOVERED_KEPT = 1000
"""How many recovered runs this process remembers for ``start_pending_recovery``'s report."""


def now_ms() -> int:
    return int(time.time() * 1000)


def one_line(text: str, limit: int = 100) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


@dataclass
class StageContext:
    """What a Python step (``{"name", "run"}``) is called with."""

    run_id: str
    stage: str
    input: str
    outputs: dict[str, str]
    api: Any


@dataclass
class LiveRun:
    spec: dict[str, Any]
    status: str = "pending"
    stage: str | None = None
    stages: dict[int, dict[str, Any]] = field(default_factory=dict)
    signal: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[Any] | None = None
    result: dict[str, Any] | None = None
    local: bool = False
    """Started by this process (its progress here is the whole story; otherwise the record is)."""


class WorkflowEngine:
    def __init__(self, api: HostAPI, projects: list[str] | None = None) -> None:
        self.api = api
        self.loop = asyncio.get_running_loop()
        self.definitions: dict[str, Definition] = {}
        self.errors: list[DefinitionError] = []
        self.live: dict[str, LiveRun] = {}
        self.projects = projects or [api.cwd]
        """The project directories whose runs this process executes (its queues)."""
        self.executor_id = f"atomic-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._ready: asyncio.Future[Any] | None = None
        self._leases: Leases | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._recovered: dict[str, int] = {}
        """Runs this process handed back to their queue (sweep or command), not yet reported by
        ``start_pending_recovery``: the number of stages each had done."""
        self._delivering: set[str] = set()
        """Runs whose final message is on its way to the owner session (waiting for it to be idle)."""
        self._deliveries: set[asyncio.Task[None]] = set()

    # --- definitions ---

    def reload(self) -> list[DefinitionError]:
        self.definitions, self.errors = discover(
            self.api.agent_dir, self.api.cwd, self.api.trusted, self.api.registered_workflows()
        )
        return self.errors

    def list(self) -> list[dict[str, Any]]:
        """The definitions: ``[{name, description, stages, source}]``."""
        return [
            {"name": d.name, "description": d.description, "stages": [s.name for s in d.stages], "source": d.source}
            for d in sorted(self.definitions.values(), key=lambda d: d.name)
        ]

    # --- DBOS, on first use ---

    def database_url(self) -> str:
        """``DBOS_SYSTEM_DATABASE_URL``, settings ``workflows.databaseUrl``, else the shared
        database of the sessions (``ATOMIC_DATABASE_URL``, settings ``database.url``; a URL, not a
        ``key=value`` string), else SQLite under the agent dir."""
        for url in (
            os.environ.get("DBOS_SYSTEM_DATABASE_URL"),
            _setting(self.api.settings, "workflows", "databaseUrl"),
            os.environ.get(ENV_URL),
            _setting(self.api.settings, "database", "url"),
        ):
            if isinstance(url, str) and "://" in url:
                return url
        return f"sqlite:///{self.sqlite_path()}"

    def sqlite_path(self) -> Path:
        return Path(self.api.agent_dir) / "workflows.sqlite"

    def may_have_runs(self) -> bool:
        """False when no run can exist yet (the default SQLite file is absent): dbos stays unimported."""
        return self._ready is not None or not self.database_url().startswith("sqlite:") or self.sqlite_path().exists()

    async def serve(self, projects: list[str]) -> str:
        """``atomic worker``: launch DBOS now, listening to the queues of ``projects`` (and
        recovering dead executors' runs); returns this executor's id."""
        if self._ready is not None:
            raise HostError("workflows: DBOS is launched already")
        self.projects = list(projects)
        await self.durable()
        return self.executor_id

    async def durable(self) -> Any:
        if self._ready is None:
            self._ready = asyncio.ensure_future(self._boot())
        return await asyncio.shield(self._ready)

    async def _boot(self) -> Any:
        url = self.database_url()
        sqlite = _sqlite_file(url)
        if sqlite is not None:
            await asyncio.to_thread(_private_file, sqlite)
        module = await asyncio.to_thread(importlib.import_module, "builtin_plugins.workflows.durable")
        self._leases = leases_for(url, sqlite)
        # The lease first: a run this executor dequeues is never seen PENDING without it.
        await asyncio.to_thread(self._leases.hold, self.executor_id)
        await asyncio.to_thread(module.launch, self, url, self.executor_id, self.projects)
        self._sweeper = asyncio.create_task(self._sweep(module))
        return module

    async def on_host_loop(self, coro: Any) -> Any:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            return await coro
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    async def close(self) -> None:
        """Host exit. A run that just ended is given a moment to be recorded; a running one is
        left as it is (not aborted: that would record a failed stage): once this process is gone,
        its lease is free and another process (or the next one) recovers it."""
        ending = [
            live.task
            for live in self.live.values()
            if live.task is not None and not live.task.done() and live.status in ("completed", "failed", "cancelled")
        ]
        if ending:
            await asyncio.wait(ending, timeout=5)
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        if self._ready is not None and self._ready.done() and not self._ready.exception():
            try:
                await asyncio.wait_for(asyncio.to_thread(self._ready.result().destroy), 5)
            except Exception as exc:  # leaving is more important than a clean DBOS shutdown
                log.warning(f"workflows: DBOS shutdown: {exc}")
        if self._leases is not None:
            self._leases.close()  # not in a thread: DBOS shut down the loop's thread pool

    # --- starting, progress, cancelling ---

    async def start(self, name: str, run_input: str) -> str:
        """Start a run of ``name``; returns its id at once (the run goes on in the background)."""
        definition = self.definitions.get(name)
        if definition is None:
            raise HostError(f"Unknown workflow: {name}")
        run_id = str(uuid.uuid4())
        model, thinking = _session_model(self.api.session_entries())
        spec = {
            "runId": run_id,
            "name": name,
            "input": run_input,
            "cwd": self.api.cwd,
            "ownerSessionId": self.api.session_id,
            "ownerSessionFile": self.api.session_file,
            "model": model,
            "thinking": thinking,
            "source": definition.source,
            "stages": [s.to_spec() for s in definition.stages],
            "createdAt": now_ms(),
        }
        live = self.live[run_id] = LiveRun(spec, local=True)
        self._update(live)
        live.task = asyncio.create_task(self._drive(live))
        return run_id

    async def _drive(self, live: LiveRun) -> None:
        """Enqueue a run on its project's queue and wait for its end. A process of the project
        runs it (usually this one); when another did, its end is reported here."""
        try:
            durable = await self.durable()
            handle = await durable.start(live.spec)
            result = await handle.get_result(polling_interval_sec=WATCH_S)
        except Exception as exc:
            if live.status in ("completed", "failed", "cancelled"):
                return  # DBOS reports the cancellation of a run we already ended
            if self._ready is not None and self._ready.done() and not self._ready.exception():
                # The run is recorded: the database says how it ends (here it may only have lost
                # its lease, and another process recovered it; DBOS refused this one's results).
                log.warning(f"workflow {live.spec['name']}: {type(exc).__name__}: {exc}; its record decides")
                await self._watch(live)
                return
            log.warning(f"workflow {live.spec['name']} failed: {type(exc).__name__}: {exc}")
            await self.finish(live.spec, {"status": "failed", "error": str(exc) or type(exc).__name__})
            return
        if live.status not in ("completed", "failed", "cancelled") and isinstance(result, dict):
            await self.finish(live.spec, result)

    async def cancel(self, run_id: str) -> bool:
        live = self.live.get(run_id)
        if live is not None and live.status in ("completed", "failed", "cancelled"):
            return False
        if live is None:
            if not self.may_have_runs():
                return False
            durable = await self.durable()
            status = await durable.get_run(run_id)
            if status is None or status.status not in ("PENDING", "ENQUEUED", "DELAYED"):
                return False
            await durable.cancel(run_id)
            return True
        live.signal.set()
        live.status = "cancelled"
        self._update(live)
        self._notify(live.spec, f"Workflow {live.spec['name']} cancelled (run {run_id}).", "warning")
        if self._ready is not None:
            task = asyncio.create_task(self._cancel_if_stuck(live))
            self._deliveries.add(task)
            task.add_done_callback(self._deliveries.discard)
        return True

    async def _cancel_if_stuck(self, live: LiveRun) -> None:
        """A run this process drives ends by itself once its stage sees the abort signal: the
        workflow records ``cancelled`` as its result. DBOS's own cancel is for a stage that does
        not stop (a Python step): cancelling a workflow while it runs here makes DBOS fail its
        next step and log the traceback of a cancelled workflow."""
        if live.task is not None and not live.task.done():
            done, _ = await asyncio.wait({live.task}, timeout=CANCEL_GRACE_S)
            if done:
                return
        durable = await self.durable()
        await durable.cancel(live.spec["runId"])

    def _live_for(self, spec: dict[str, Any]) -> LiveRun:
        live = self.live.get(spec["runId"])
        if live is None:
            live = self.live[spec["runId"]] = LiveRun(spec)
        return live

    def _owned_here(self, spec: dict[str, Any]) -> bool:
        """Whether the run's owner session is this process's active session: only then does
        the client hear of its progress (a run of another session may run here headless)."""
        return self.api.session_id is not None and self.api.session_id == spec.get("ownerSessionId")

    def _update(self, live: LiveRun) -> None:
        if not self._owned_here(live.spec):
            return
        event: dict[str, Any] = {
            "type": "workflow_run_update",
            "runId": live.spec["runId"],
            "name": live.spec["name"],
            "status": live.status,
        }
        if live.stage is not None:
            event["stage"] = live.stage
        self.api.emit(event)

    def _notify(self, spec: dict[str, Any], message: str, kind: str = "info") -> None:
        if not self._owned_here(spec):
            log.info(f"workflows: {message}")
            return
        try:
            self.api.ui.notify(message, kind)
        except Exception as exc:
            log.warning(f"workflows: notify failed: {exc}")

    async def execute_stage(self, spec: dict[str, Any], index: int, outputs: dict[str, str]) -> dict[str, Any]:
        """One stage (the body of the ``atomic.stage`` step): its model tiers in order, headless
        from the spec (its project, owner session, model), whatever session is open here."""
        live = self._live_for(spec)
        stage = spec["stages"][index]
        name, total = stage["name"], len(spec["stages"])
        live.status, live.stage = "running", name
        started = now_ms()
        live.stages[index] = {"status": "running", "startedAt": started}
        self._update(live)
        self._notify(spec, f'Workflow {spec["name"]}: stage {index + 1}/{total} "{name}" started.')
        header = {
            "internal": True,
            "workflow": {"runId": spec["runId"], "stageId": f"{spec['runId']}:{index + 1}", "stageName": name},
        }
        result: dict[str, Any] = {"status": "failed", "output": "", "startedAt": started, "attempts": []}
        if stage.get("python"):
            result.update(await self._python_stage(spec, stage, outputs))
        else:
            prompt = render(stage["prompt"], spec["input"], outputs)
            for tier in stage.get("models") or [spec.get("model")]:
                try:
                    r = await self.api.run_internal_session(
                        prompt,
                        header=header,
                        model=tier,
                        thinking=stage.get("thinking") or spec.get("thinking"),
                        tools=stage.get("tools"),
                        signal=live.signal,
                        cwd=spec["cwd"],
                        parent_session=spec.get("ownerSessionFile"),
                    )
                except HostError as exc:  # an unknown model (or none): the next tier
                    r = {"stopReason": "error", "errorMessage": str(exc), "model": tier, "text": ""}
                attempt = {"model": r.get("model"), "stopReason": r.get("stopReason")}
                for key in ("sessionFile", "errorMessage", "unresolvedOverflow"):
                    if r.get(key):
                        attempt[key] = r[key]
                result["attempts"].append(attempt)
                result["model"], result["sessionFile"] = r.get("model"), r.get("sessionFile")
                if r.get("stopReason") not in ("error", "aborted") and not r.get("unresolvedOverflow"):
                    result.update(status="completed", output=r.get("text", ""))
                    result.pop("errorMessage", None)
                    break
                result["errorMessage"] = r.get("errorMessage") or "stage failed"
                if live.signal.is_set() or r.get("stopReason") == "aborted":
                    result["status"] = "cancelled"
                    break
        result["endedAt"] = now_ms()
        live.stages[index] = result
        if result["status"] == "completed":
            self._notify(spec, f'Workflow {spec["name"]}: stage {index + 1}/{total} "{name}" done.')
        else:
            self._notify(
                spec,
                f'Workflow {spec["name"]}: stage {index + 1}/{total} "{name}" {result["status"]}: '
                f"{result.get('errorMessage', '')}",
                "error",
            )
        if live.status == "running":
            self._update(live)
        return result

    async def _python_stage(
        self, spec: dict[str, Any], stage: dict[str, Any], outputs: dict[str, str]
    ) -> dict[str, Any]:
        definition = self.definitions.get(spec["name"])
        step = next((s for s in definition.stages if s.name == stage["name"]), None) if definition else None
        if step is None or step.run is None:
            return {"errorMessage": f'Python step "{stage["name"]}" of {spec["name"]} is not registered'}
        try:
            ctx = StageContext(spec["runId"], stage["name"], spec["input"], dict(outputs), self.api)
            value = resolve(step.run)(ctx)
            if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future):
                value = await value
            return {"status": "completed", "output": "" if value is None else str(value)}
        except Exception as exc:
            return {"errorMessage": f"{type(exc).__name__}: {exc}"}

    async def finish(self, spec: dict[str, Any], result: dict[str, Any]) -> None:
        """The run ended (the ``atomic.finish`` step, or the end seen by the process that waits
        for it): tell the client, add the output to the owner session."""
        live = self._live_for(spec)
        if live.status == "cancelled":
            return
        live.status, live.stage, live.result = result["status"], None, result
        self._update(live)
        message = final_message(spec, result)
        if message is None:
            return
        if not self._owned_here(spec):
            await self._deliver_stored(spec, *message)
            return
        if result["status"] == "completed":
            self._notify(spec, f"Workflow {spec['name']} finished (run {spec['runId']}).")
        else:
            self._notify(spec, message[0], "error")
        self._schedule_delivery(spec, *message)

    # --- the final message in the owner session, exactly once ---

    def _delivered(self, run_id: str, entries: list[dict[str, Any]] | None = None) -> bool:
        """Whether the session (default: the active one) holds the final message of ``run_id``."""
        for entry in reversed(self.api.session_entries() if entries is None else entries):
            if entry.get("type") == "custom_message" and entry.get("customType") == "workflow":
                details = entry.get("details")
                if isinstance(details, dict) and details.get("runId") == run_id:
                    return True
        return False

    async def _deliver_stored(self, spec: dict[str, Any], text: str, details: dict[str, Any]) -> None:
        """The owner session is not open here: append the message to it in the store, under its
        write lock, unless it is there already. While another process has it open, the message
        stays in the run record (that process adds it: the run's end is watched there, or its
        ``start_pending_recovery`` does)."""
        location, run_id = spec.get("ownerSessionFile"), spec["runId"]
        if not location:
            return
        try:
            added = await self.api.append_to_session(
                location, "workflow", text, details=details, unless=lambda entries: self._delivered(run_id, entries)
            )
        except Exception as exc:
            log.info(f"workflows: the result of run {run_id} stays in its record ({type(exc).__name__}: {exc})")
            return
        if added:
            log.info(f"workflows: added the result of run {run_id} to session {spec.get('ownerSessionId')}")

    def _schedule_delivery(self, spec: dict[str, Any], text: str, details: dict[str, Any]) -> bool:
        """Add a run's final message to its owner session: at once when idle, else once the
        owner's run is over (mid-run it would be steered into the model's turn). False when it is
        not for now: another session is active (the result stays in the run record, and the
        owner's ``start_pending_recovery`` adds it), the message is there or on its way."""
        run_id = spec["runId"]
        if not self._owned_here(spec) or run_id in self._delivering or self._delivered(run_id):
            return False
        self._delivering.add(run_id)
        if not self.api.is_streaming:
            self._deliver(spec, text, details)
        else:
            task = asyncio.create_task(self._deliver_when_idle(spec, text, details))
            self._deliveries.add(task)
            task.add_done_callback(self._deliveries.discard)
        return True

    async def _deliver_when_idle(self, spec: dict[str, Any], text: str, details: dict[str, Any]) -> None:
        try:
            while self.api.is_streaming:
                await asyncio.sleep(0.1)
        finally:
            self._delivering.discard(spec["runId"])
        if self._owned_here(spec) and not self._delivered(spec["runId"]):
            self._deliver(spec, text, details)

    def _deliver(self, spec: dict[str, Any], text: str, details: dict[str, Any]) -> None:
        try:  # idle, no trigger: appended at once (message_start/end, a custom_message entry)
            self.api.send_message("workflow", text, display=True, details=details)
        except Exception as exc:
            log.warning(f"workflows: could not add the result: {exc}")
        finally:
            self._delivering.discard(spec["runId"])

    # --- history ---

    async def list_runs(self, status: str | None = None) -> list[dict[str, Any]]:
        local = {run_id: live for run_id, live in self.live.items() if live.local}
        records = [self._live_record(live) for live in local.values() if live.spec.get("cwd") == self.api.cwd]
        if self.may_have_runs():
            durable = await self.durable()
            runs = [wf for wf in await durable.list_runs(self.api.cwd) if wf.workflow_id not in local]
            alive = await self._alive_executors(runs)
            for wf in runs:
                spec = _spec_of(wf)
                if spec is None or spec.get("cwd") != self.api.cwd or not spec.get("ownerSessionId"):
                    continue  # unreadable (get_workflow_run_summary says why), or not a run of a session
                try:
                    steps = await durable.steps(wf.workflow_id)
                except durable.UnreadableRecord as exc:
                    log.warning(f"workflows: run {wf.workflow_id}: a stored stage result cannot be read: {exc}")
                    continue
                records.append(self._stored_record(wf, spec, steps, alive))
        if status and status != "all":
            records = [r for r in records if r["status"] == status]
        return [{k: v for k, v in r.items() if k in _SUMMARY_KEYS} for r in records]

    async def run_detail(self, run_id: str) -> dict[str, Any] | None:
        live = self.live.get(run_id)
        if live is not None and live.local:
            return self._live_record(live)
        if not self.may_have_runs():
            return None
        durable = await self.durable()
        wf = await durable.get_run(run_id)
        if wf is None:
            return None
        if durable.project_of(wf) != durable.queue_name(self.api.cwd):
            return None  # another project's run
        spec = _spec_of(wf)
        if spec is None:
            raise HostError(
                f"Run {run_id}: its stored record cannot be read (not the JSON this host writes; "
                "a pickled or damaged row is never loaded)"
            )
        try:
            steps = await durable.steps(run_id)
        except durable.UnreadableRecord as exc:
            raise HostError(f"Run {run_id}: a stored stage result cannot be read: {exc}") from None
        return self._stored_record(wf, spec, steps, await self._alive_executors([wf]))

    async def _alive_executors(self, runs: list[Any]) -> set[str]:
        """The executors of these runs' PENDING ones that still hold their lease."""
        pending = {wf.executor_id for wf in runs if wf.status == "PENDING" and wf.executor_id}
        if not pending or self._leases is None:
            return set()
        return await asyncio.to_thread(self._leases.alive, pending)

    def _base(self, spec: dict[str, Any], status: str) -> dict[str, Any]:
        return {
            "runId": spec["runId"],
            "name": spec["name"],
            "status": status,
            "label": one_line(f"{spec['name']}: {spec.get('input', '')}", 80),
            "identity": {"workflow": spec["name"], "sessionId": spec.get("ownerSessionId")},
            "input": spec.get("input", ""),
            "sessionId": spec.get("ownerSessionId"),
            "sessionFile": spec.get("ownerSessionFile"),
            "createdAt": spec.get("createdAt"),
        }

    def _with_stages(self, record: dict[str, Any], spec: dict[str, Any], done: dict[int, dict[str, Any]]) -> None:
        stages = []
        last_done: tuple[int, dict[str, Any]] | None = None
        for index, stage in enumerate(spec["stages"]):
            got = done.get(index) or {}
            item: dict[str, Any] = {
                "id": f"{spec['runId']}:{index + 1}",
                "name": stage["name"],
                "status": got.get("status", "pending"),
            }
            for key in ("model", "sessionFile", "startedAt", "endedAt", "errorMessage", "attempts"):
                if got.get(key) is not None:
                    item[key] = got[key]
            if got.get("status") == "completed":
                last_done = (index, got)
            stages.append(item)
        record["stages"] = stages
        if last_done is not None:
            index, got = last_done
            summary = f"{index + 1}/{len(spec['stages'])} stages done; {spec['stages'][index]['name']}: "
            record["summary"] = one_line(summary + (got.get("output") or "(no output)"), SUMMARY_CHARS)
            record["summarizedThrough"] = got.get("endedAt") or now_ms()

    def _live_record(self, live: LiveRun) -> dict[str, Any]:
        record = self._base(live.spec, live.status)
        self._with_stages(record, live.spec, live.stages)
        if live.result is not None:
            record.update({k: v for k, v in live.result.items() if k in ("output", "error")})
        return record

    def _stored_record(
        self, wf: Any, spec: dict[str, Any], steps: list[dict[str, Any]], alive: set[str]
    ) -> dict[str, Any]:
        done = {i: s["output"] for i, s in enumerate(steps) if isinstance(s.get("output"), dict)}
        output = wf.output if isinstance(wf.output, dict) else None
        status = {
            "SUCCESS": (output or {}).get("status", "completed"),
            "ERROR": "failed",
            "MAX_RECOVERY_ATTEMPTS_EXCEEDED": "failed",
            "CANCELLED": "cancelled",
            "ENQUEUED": "pending",
            "DELAYED": "pending",
        }.get(wf.status)
        if status is None:  # PENDING: running somewhere, or left behind by a process that is gone
            status = "running" if wf.executor_id in alive else "crashed"
            running = len(done)
            if running < len(spec["stages"]):
                done[running] = {"status": status}
        record = self._base(spec, status)
        live = self.live.get(wf.workflow_id)
        if live is not None and live.result is not None and status in ("running", "crashed", "pending"):
            # It ended here a moment ago (its finish step ran): DBOS records the end just after.
            record["status"], output = live.status, live.result
            done.update(live.stages)
        self._with_stages(record, spec, done)
        if output:
            record.update({k: v for k, v in output.items() if k in ("output", "error")})
        record["updatedAt"] = wf.updated_at
        return record

    # --- recovery ---

    async def _sweep(self, durable: Any) -> None:
        """Every ``SWEEP_S``: recover the runs of executors whose lease is gone (any project's: a
        recovered run goes back to its own project's queue)."""
        while True:
            await asyncio.sleep(SWEEP_S)
            try:
                await self._recover_dead(durable)
            except Exception as exc:  # the database is away for a moment: the next sweep tries again
                log.warning(f"workflows: recovery sweep: {type(exc).__name__}: {exc}")

    async def _recover_dead(self, durable: Any) -> dict[str, int]:
        """Hand the PENDING runs of dead executors back to their project's queue (DBOS's guarded
        re-enqueue, one process at a time by the sweep lock). Returns ``{runId: stages done}`` of
        those seen dead: recovered now, or by the process that holds the sweep lock."""
        runs = [wf for wf in await durable.pending() if wf.executor_id and wf.executor_id != self.executor_id]
        if not runs:
            return {}
        assert self._leases is not None
        alive = await asyncio.to_thread(self._leases.alive, {wf.executor_id for wf in runs})
        dead = {wf.workflow_id: await self._stages_done(durable, wf.workflow_id) for wf in runs
                if wf.executor_id not in alive}  # fmt: skip
        if dead and await asyncio.to_thread(self._leases.try_sweep):
            try:
                recovered = await asyncio.to_thread(durable.recover, [wf for wf in runs if wf.workflow_id in dead])
            finally:
                await asyncio.to_thread(self._leases.end_sweep)
            if recovered:
                self._recovered.update({run_id: dead[run_id] for run_id in recovered})
                for stale in list(self._recovered)[:-RECOVERED_KEPT]:  # never reported (another session's)
                    del self._recovered[stale]
                log.info(f"workflows: recovered {len(recovered)} run(s) of dead executors")
        return dead

    async def _stages_done(self, durable: Any, run_id: str) -> int:
        try:
            return len(await durable.steps(run_id))
        except durable.UnreadableRecord as exc:
            log.warning(f"workflows: run {run_id}: {exc}")
            return 0

    async def recover(self, event: SessionRecoverEvent) -> RecoverResult | None:
        """``start_pending_recovery``: recover now the runs this session owns that a dead process
        left behind (they continue from their last completed stage, on a process of the project),
        wait here for their end, and add the final message of ended runs that never reached the
        session (``completions``: the process died before it was appended, or the session was
        open elsewhere when the run ended). ``resumed`` also counts the runs of this session that
        this process's sweep recovered a moment before (they may have ended since)."""
        if not self.may_have_runs():
            return None
        durable = await self.durable()
        notices: list[str] = []
        resumed = completions = 0
        mine: list[tuple[Any, dict[str, Any]]] = []
        for wf in await durable.list_runs(self.api.cwd):
            spec = _spec_of(wf)
            if spec is None or spec.get("ownerSessionId") != event.session_id:
                continue
            ended = self._ended(wf)
            if ended is not None:
                message = final_message(spec, ended)
                if message is not None and self._schedule_delivery(spec, *message):
                    completions += 1
            if wf.workflow_id in self._recovered or (ended is None and wf.workflow_id not in self.live):
                mine.append((wf, spec))  # recovered here, left behind, or running elsewhere
        dead = await self._recover_dead(durable) if mine else {}
        for wf, spec in mine:
            if wf.workflow_id not in self.live and self._ended(wf) is None:
                live = self.live[wf.workflow_id] = LiveRun(spec, status="pending")
                live.task = asyncio.create_task(self._watch(live))
            done = self._recovered.pop(wf.workflow_id, dead.get(wf.workflow_id))
            if done is None:
                continue  # running (or queued) elsewhere: watched, not resumed
            stage = spec["stages"][min(done, len(spec["stages"]) - 1)]["name"]
            notices.append(
                f"Resumed workflow {spec['name']} (run {wf.workflow_id}) at stage {done + 1}/{len(spec['stages'])} "
                f'"{stage}".'
            )
            resumed += 1
        if not (resumed or completions):
            return None
        return RecoverResult(notices=notices, resumed=resumed, completions=completions)

    def _ended(self, wf: Any) -> dict[str, Any] | None:
        """How a run ended (its result), or None while it has not (or this process drives it)."""
        live = self.live.get(wf.workflow_id)
        if live is not None:
            return live.result if live.status in ("completed", "failed") and live.result is not None else None
        if wf.status == "SUCCESS":
            return wf.output if isinstance(wf.output, dict) else None
        if wf.status in ("ERROR", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"):
            return {"status": "failed", "error": str(wf.error or "the run failed")}
        return None

    async def _watch(self, live: LiveRun) -> None:
        """A run of this session that runs on whichever process of the project took it: notice
        its end (and add its final message) if no step here reported it."""
        durable = await self.durable()
        failing = False
        while True:  # until DBOS has recorded the end (host exit waits for this task)
            await asyncio.sleep(WATCH_S)
            try:
                wf = await durable.get_run(live.spec["runId"])
            except Exception as exc:  # the database is away: ask again
                if not failing:
                    log.warning(f"workflows: run {live.spec['runId']}: {type(exc).__name__}: {exc}")
                failing = True
                continue
            failing = False
            if wf is None:
                return
            if wf.status in ("SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"):
                if live.status not in ("completed", "failed", "cancelled"):
                    output = wf.output if isinstance(wf.output, dict) else {"status": "failed", "error": str(wf.error)}
                    if wf.status == "CANCELLED":
                        output = {"status": "cancelled"}
                    await self.finish(live.spec, output)
                return


def final_message(spec: dict[str, Any], result: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The text and details of the custom message (type ``workflow``) that tells the owner
    session how a run ended; None for a cancelled run (the client cancelled it: nothing to add)."""
    status, name = result.get("status"), spec["name"]
    if status == "completed":
        text = f"Workflow {name} finished.\n\n{result.get('output', '')}"
    elif status == "failed":
        where = f" at stage {result['failedStage']}" if result.get("failedStage") else ""
        text = f"Workflow {name} failed{where}: {result.get('error', '')}"
    else:
        return None
    return text, {"runId": spec["runId"], "name": name, "status": status}


_SUMMARY_KEYS = ("runId", "name", "status", "label", "identity", "summary", "summarizedThrough")


def _spec_of(wf: Any) -> dict[str, Any] | None:
    """The run's spec, or None when its stored input is not one (DBOS hands back the raw text
    of a value it could not read, such as a refused pickle)."""
    inputs = getattr(wf, "input", None)
    args = inputs.get("args") if isinstance(inputs, dict) else None
    spec = args[0] if args else None
    return spec if isinstance(spec, dict) and isinstance(spec.get("stages"), list) else None


def _session_model(entries: list[dict[str, Any]]) -> tuple[str | None, str | None]:
    """The model (``provider/id``) and thinking level a session uses now: its last changes."""
    model = thinking = None
    for entry in reversed(entries):
        if model is None and entry.get("type") == "model_change":
            model = f"{entry.get('provider')}/{entry.get('modelId')}"
        if thinking is None and entry.get("type") == "thinking_level_change":
            thinking = entry.get("thinkingLevel")
        if model is not None and thinking is not None:
            break
    return model, thinking


def _setting(settings: dict[str, Any], section: str, key: str) -> Any:
    conf = settings.get(section)
    return conf.get(key) if isinstance(conf, dict) else None


def _sqlite_file(url: str) -> Path | None:
    """The file of a ``sqlite:///path`` URL; None for a server database."""
    if not url.startswith("sqlite:///"):
        return None
    return Path(url[len("sqlite:///") :].split("?", 1)[0])


def _private_file(path: Path) -> None:
    """Create the database file (and its directory) private before SQLite does it with the umask:
    it holds run inputs and outputs. SQLite gives its -wal and -shm files the same mode."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.close(os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600))
