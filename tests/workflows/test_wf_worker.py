"""``atomic worker``: a directory that is not one is refused with a clear error and status 2;
with the workflows plugin blocked it says so instead of waiting for nothing. (Serving projects
through real processes and PostgreSQL: test_wf_scale.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from atomic_host.testing import host_env


def run_worker(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = host_env(tmp_path / "agent", tmp_path / "faux.jsonl", tmp_path / "faux-log.jsonl")
    return subprocess.run(
        [sys.executable, "-m", "atomic_host", "worker", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_worker_refuses_a_missing_project(tmp_path: Path) -> None:
    done = run_worker(tmp_path, str(tmp_path / "nowhere"))
    assert done.returncode == 2
    assert done.stderr.strip() == f"atomic worker: not a directory: {tmp_path / 'nowhere'}"
    assert done.stdout == ""


def test_worker_without_the_workflows_plugin_says_so(tmp_path: Path) -> None:
    (tmp_path / "agent").mkdir()
    settings = {"disabledPlugins": ["builtin_plugins.workflows"]}
    (tmp_path / "agent" / "settings.json").write_text(json.dumps(settings))
    done = run_worker(tmp_path)
    assert done.returncode == 2
    assert "the workflows plugin is not loaded" in done.stderr
    assert done.stdout == ""
