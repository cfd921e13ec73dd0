"""Print mode (``-p``) and JSON mode (``--mode json -p``) run one prompt and exit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from atomic_host.core.protocol import validate_output_line
from atomic_host.testing import inherited_env


def _run(tmp_path: Path, step: object, *args: str) -> subprocess.CompletedProcess[str]:
    agent, work = tmp_path / "agent", tmp_path / "work"
    agent.mkdir(exist_ok=True)
    work.mkdir(exist_ok=True)
    script = tmp_path / "faux.jsonl"
    script.write_text(json.dumps(step) + "\n")
    env = inherited_env()
    env.update(ATOMIC_CODING_AGENT_DIR=str(agent), ATOMIC_FAUX_SCRIPT=str(script))
    return subprocess.run(
        [sys.executable, "-m", "atomic_host", *args, "--provider", "faux"],
        cwd=work, env=env, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_print_mode_renders_answer(tmp_path: Path) -> None:
    proc = _run(tmp_path, "The answer is 42.", "-p", "what is it?")
    assert proc.returncode == 0, proc.stderr
    assert "The answer is 42." in proc.stdout


def test_print_mode_provider_error_exits_nonzero(tmp_path: Path) -> None:
    step = {"content": [], "stopReason": "error", "errorMessage": "400 invalid request: bad field"}
    proc = _run(tmp_path, step, "-p", "hi")
    assert proc.returncode != 0
    assert "bad field" in proc.stdout + proc.stderr


def test_json_mode_prints_events(tmp_path: Path) -> None:
    proc = _run(tmp_path, "json reply", "--mode", "json", "-p", "hi")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    types = [json.loads(line)["type"] for line in lines]
    assert types[0] == "agent_start" and "agent_end" in types
    assert types.count("message_update") >= 1
    for line in lines:
        validate_output_line(line)
    end = next(json.loads(line) for line in lines if json.loads(line)["type"] == "agent_end")
    assert end["messages"][-1]["content"] == [{"type": "text", "text": "json reply"}], (
        proc.stdout,
        proc.stderr,
    )
