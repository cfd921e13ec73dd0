"""Built-in plugin "workflows": named pipelines of agent stages that run unattended, survive a
crash and can be inspected from any client (issue 11; docs/workflows.md).

- definitions: ``<agentDir>/workflows/*.toml``, ``<cwd>/.atomic/workflows/*.toml`` (trusted
  projects; they win by name) and ``register_workflows`` (Python);
- ``/workflow`` lists them, ``/workflow <name> <input>`` starts a run, ``/workflow cancel <runId>``;
- each stage is an agent run in an internal child session, with model tiers;
- durable state in DBOS (SQLite under the agent dir, PostgreSQL when configured), imported on
  first use only; ``list_workflow_runs`` / ``get_workflow_run_summary`` read it;
- ``start_pending_recovery`` (the ``session_recover`` hook) resumes this session's runs.

This module is imported at every start: it imports nothing heavy.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_host import hookimpl
from atomic_host.contract.commands import SlashCommand

if TYPE_CHECKING:
    from atomic_host.contract.events import SessionRecoverEvent
    from atomic_host.contract.host import HostAPI
    from atomic_host.contract.results import RecoverResult
    from builtin_plugins.workflows.engine import WorkflowEngine

USAGE = "Usage: /workflow (list) | /workflow <name> <input> | /workflow cancel <runId>"


class LazyEngine:
    """What ``api.workflows`` (and the RPC frontend) gets: the engine is built, and its modules
    imported, on first use, so a host that never touches workflows pays nothing for them."""

    def __init__(self, api: HostAPI) -> None:
        self._api = api
        self._engine: WorkflowEngine | None = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if self._engine is None:
            # the engine facade loads on first use (DBOS itself only when a workflow runs)
            from builtin_plugins.workflows.engine import WorkflowEngine

            self._engine = WorkflowEngine(self._api)
            self._engine.reload()
        return getattr(self._engine, name)


def engine_of(api: HostAPI) -> WorkflowEngine:
    engine = api.service("workflows")
    if engine is None:
        engine = LazyEngine(api)
        api.provide("workflows", engine)
    return engine  # type: ignore[return-value]


def _listing(engine: WorkflowEngine) -> str:
    lines = ["Workflows:"] if engine.definitions else ["No workflows defined (add <agentDir>/workflows/<name>.toml)."]
    for d in engine.list():
        about = f" - {d['description']}" if d["description"] else ""
        lines.append(f"  {d['name']}{about} ({' -> '.join(d['stages'])})")
    if engine.errors:
        lines.append("Not loaded:")
        lines += [f"  {e}" for e in engine.errors]
    return "\n".join(lines)


async def workflow_command(args: str, api: HostAPI) -> None:
    engine = engine_of(api)
    engine.reload()  # files may have changed since startup
    words = args.strip().split(None, 1)
    if not words or words[0] == "list":
        api.ui.notify(_listing(engine), "error" if engine.errors else "info")
        return
    if words[0] == "cancel":
        run_id = words[1].strip() if len(words) > 1 else ""
        if not run_id:
            api.ui.notify(USAGE, "error")
        elif not await engine.cancel(run_id):
            api.ui.notify(f"No running workflow run {run_id}", "error")
        return
    name, run_input = words[0], words[1] if len(words) > 1 else ""
    if name not in engine.definitions:
        api.ui.notify(f"Unknown workflow: {name}\n{_listing(engine)}", "error")
        return
    run_id = await engine.start(name, run_input)
    api.ui.notify(f"Started workflow {name} (run {run_id}).")


@hookimpl
def register_commands(register: Any) -> None:
    register(
        SlashCommand(
            name="workflow",
            handler=workflow_command,
            description="List workflows, start one (/workflow <name> <input>) or cancel a run",
        )
    )


@hookimpl
async def host_start(api: HostAPI) -> None:
    engine_of(api)
    roots = [Path(api.agent_dir) / "workflows"]
    if api.trusted:
        roots.append(Path(api.cwd) / ".atomic" / "workflows")
    if not api.registered_workflows() and not any(r.is_dir() for r in roots):
        return
    # lazy: the definition parser (and dataclasses, tests/perf/startup_imports) only when workflows exist
    from builtin_plugins.workflows.definitions import discover

    _found, errors = discover(api.agent_dir, api.cwd, api.trusted, api.registered_workflows())
    for error in errors:
        api.emit(
            {
                "type": "extension_error",
                "extensionPath": error.path or "builtin:builtin_plugins.workflows",
                "event": "workflow",
                "error": str(error),
            }
        )


@hookimpl
async def session_recover(event: SessionRecoverEvent, api: HostAPI) -> RecoverResult | None:
    return await engine_of(api).recover(event)


@hookimpl
async def host_shutdown(api: HostAPI) -> None:
    engine = api.service("workflows")
    if isinstance(engine, LazyEngine) and engine._engine is not None:
        await engine._engine.close()
