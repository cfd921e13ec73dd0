"""Helpers for the navigation-hook tests: a real plugin file that records every session hook it
gets (one JSON line per call, in the file named by ``NAV_LOG``) and cancels the before-hooks named
in ``NAV_CANCEL`` (comma-separated)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from atomic_host.testing import host_env

RECORDER = '''
import json
import os

from atomic_host import Cancel, hookimpl


def _log(hook, event, api):
    record = {"hook": hook, "eventType": type(event).__name__, "sessionId": api.session_id, **vars(event)}
    with open(os.environ["NAV_LOG"], "a") as f:
        f.write(json.dumps(record, default=str) + "\\n")


def _maybe_cancel(hook):
    if hook in os.environ.get("NAV_CANCEL", "").split(","):
        return Cancel(hook + " refused by the recorder")
    return None


@hookimpl
async def session_before_switch(event, api):
    _log("session_before_switch", event, api)
    return _maybe_cancel("session_before_switch")


@hookimpl
async def session_before_fork(event, api):
    _log("session_before_fork", event, api)
    return _maybe_cancel("session_before_fork")


@hookimpl
async def session_before_tree(event, api):
    _log("session_before_tree", event, api)
    return _maybe_cancel("session_before_tree")


@hookimpl
async def session_tree(event, api):
    _log("session_tree", event, api)


@hookimpl
def session_info_changed(event, api):
    _log("session_info_changed", event, api)


@hookimpl
async def session_start(event, api):
    _log("session_start", event, api)


@hookimpl
async def session_shutdown(event, api):
    _log("session_shutdown", event, api)
'''

DICT_CANCEL = '''
from atomic_host import hookimpl


@hookimpl
def session_before_switch(event, api):
    return {"cancel": True}
'''
"""The old dict spelling of a cancel: no longer a result type of ``session_before_switch``."""


def write_plugin(directory: Path, name: str, source: str) -> Path:
    path = directory / f"{name}.py"
    path.write_text(source)
    return path


def read_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def hooks_of(log: list[dict[str, Any]]) -> list[str]:
    return [r["hook"] for r in log]


def run_print_mode(root: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``atomic -p …`` with the faux provider under ``root`` (agent dir, work dir, faux script)."""
    agent, work = root / "agent", root / "work"
    agent.mkdir(exist_ok=True)
    work.mkdir(exist_ok=True)
    (agent / "settings.json").write_text(json.dumps({"loopStallMs": 0}))
    script = root / "faux.jsonl"
    script.write_text(json.dumps("an answer") + "\n")  # the faux provider reads its script afresh per process
    full_env = host_env(agent, script, root / "faux-log.jsonl", env)
    return subprocess.run(
        [sys.executable, "-m", "atomic_host", "--provider", "faux", *args],
        cwd=work,
        env=full_env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
