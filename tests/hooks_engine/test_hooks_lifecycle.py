"""Lifecycle hooks through the real host: one real plugin file logs every call, the test drives
startup, new/switch/fork, compaction, recovery, hot reload and exit over RPC and reads the log."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from atomic_host.testing import start_host

LOGGER = """
import json, os
from atomic_host import hookimpl

VERSION = {version}

def _log(hook, **fields):
    with open(os.environ["HOOK_LOG"], "a") as f:
        f.write(json.dumps({{"hook": hook, "version": VERSION, **fields}}) + "\\n")

@hookimpl
def host_start(api):
    _log("host_start", session=api.session_id is not None)

@hookimpl
async def host_shutdown(api):
    _log("host_shutdown")

@hookimpl
def plugin_unload(api):
    _log("plugin_unload")

@hookimpl
async def session_start(event, api):
    _log("session_start", reason=event.reason, previous=event.previous_session_file, session=api.session_id)

@hookimpl
def session_shutdown(event, api):
    _log("session_shutdown", reason=event.reason, session=api.session_id)

@hookimpl
def session_compact(event, api):
    _log("session_compact", reason=event.reason, rung=event.result.get("rung"))

@hookimpl
def session_recover(event, api):
    _log("session_recover", reason=event.reason, session=event.session_id)
    return RecoverResult(notices=["logger restored nothing"])

from atomic_host.contract.results import RecoverResult
"""


def _read(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


async def _until(predicate: Any, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def test_session_and_host_lifecycle_hooks_fire_with_their_events(tmp_path: Path) -> None:
    log = tmp_path / "hooks.jsonl"
    plugin = tmp_path / "logger.py"
    plugin.write_text(LOGGER.format(version=1))
    async with start_host("-e", str(plugin), env={"HOOK_LOG": str(log)}) as host:
        c = host.client
        state = await c.get_state()
        first, first_file = state["sessionId"], state["sessionLocation"]
        host.faux.push("first answer")
        await c.prompt_and_wait("\n".join(f"requirement {i}: keep widget {i} working" for i in range(30)))
        host.faux.push("second answer")
        await c.prompt_and_wait("now the second thing")
        host.faux.push("1,5\n9,12")  # the compaction planner's reply: line ranges to drop
        await c.compact()
        report = await c.start_pending_recovery()
        assert "logger restored nothing" in report.get("notices", [])
        await c.new_session()
        second = (await c.get_state())["sessionId"]
        await c.switch_session(first)
        await _until(lambda: sum(r["hook"] == "session_start" for r in _read(log)) == 3)
    records = _read(log)
    hooks = [r["hook"] for r in records]
    # the host's lifetime encloses the session's (upstream: extensions load, then session_start)
    assert hooks[:2] == ["host_start", "session_start"]
    assert next(r for r in records if r["hook"] == "host_start")["session"] is False
    starts = [r for r in records if r["hook"] == "session_start"]
    assert [(s["reason"], s["session"]) for s in starts] == [("startup", first), ("new", second), ("resume", first)]
    assert starts[0]["previous"] is None and starts[1]["previous"] == first_file
    shutdowns = [r for r in records if r["hook"] == "session_shutdown"]
    # replaced twice (new, switch), then the host exits: the active session goes away last
    assert [s["session"] for s in shutdowns] == [first, second, first]
    assert shutdowns[-1]["reason"] == "quit"
    compact = [r for r in records if r["hook"] == "session_compact"]
    assert [(r["reason"], r["rung"]) for r in compact] == [("manual", "planned")]
    assert [r["session"] for r in records if r["hook"] == "session_recover"] == [first]
    assert hooks[-1] == "host_shutdown"


async def test_plugin_unload_runs_on_the_old_version_before_a_hot_reload(tmp_path: Path) -> None:
    log = tmp_path / "hooks.jsonl"
    ext_dir = tmp_path / "agent" / "extensions"
    ext_dir.mkdir(parents=True)
    plugin = ext_dir / "logger.py"
    plugin.write_text(LOGGER.format(version=1))
    async with start_host("--watch", base=tmp_path, env={"HOOK_LOG": str(log)}):
        await _until(lambda: any(r["hook"] == "host_start" for r in _read(log)))
        for _ in range(40):  # the watcher starts just after host_start: write until it has seen an edit
            plugin.write_text(LOGGER.format(version=2))
            await asyncio.sleep(0.25)
            if any(r["hook"] == "plugin_unload" for r in _read(log)):
                break
    unloads = [r for r in _read(log) if r["hook"] == "plugin_unload"]
    # the first reload unloads version 1; a later write noticed separately reloads 2 over 2
    assert unloads and unloads[0]["version"] == 1 and all(u["version"] == 2 for u in unloads[1:])
    assert [r["version"] for r in _read(log) if r["hook"] == "host_shutdown"] == [2]
