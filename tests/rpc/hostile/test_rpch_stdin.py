"""stdin as service managers, nohup, CI and shell redirections give it: /dev/null, a regular file, a
closed descriptor. Each must read to EOF, answer what came, and exit 0 with nothing on stderr but
notes (no traceback)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from atomic_host.testing import assert_protocol_lines, read_jsonl


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("ATOMIC_")}
    return {**env, "ATOMIC_CODING_AGENT_DIR": str(tmp_path / "agent")}


def _run(tmp_path: Path, **kwargs) -> subprocess.CompletedProcess:
    env = _env(tmp_path)
    return subprocess.run(
        [sys.executable, "-m", "atomic_host", "--mode", "rpc", "--no-session"],
        cwd=tmp_path, env=env, capture_output=True, timeout=20, **kwargs,
    )  # fmt: skip


def test_dev_null_stdin_exits_0_at_once(tmp_path: Path) -> None:
    started = time.monotonic()
    with open(os.devnull, "rb") as devnull:
        proc = _run(tmp_path, stdin=devnull)
    assert proc.returncode == 0, proc.stderr.decode()
    assert time.monotonic() - started < 10
    assert proc.stdout == b""
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()


def test_a_regular_file_as_stdin_is_read_and_answered(tmp_path: Path) -> None:
    commands = tmp_path / "commands.jsonl"
    commands.write_bytes(
        b'{"type":"get_state","id":1}\r\n\n{"type":"nope","id":2}\nnot json\n{"type":"get_state","id":3}'
    )
    with commands.open("rb") as f:
        proc = _run(tmp_path, stdin=f)
    assert proc.returncode == 0, proc.stderr.decode()
    out = tmp_path / "out.jsonl"
    out.write_bytes(proc.stdout)
    records = read_jsonl(out)
    answered = [(r.get("id"), r["command"], r["success"]) for r in records]
    # errors found while reading are answered at once; get_state waits its turn on the ordinary lane
    assert sorted(answered, key=str) == sorted(
        [(1, "get_state", True), (2, "nope", False), (None, "parse", False), (3, "get_state", True)], key=str
    )
    assert [a for a in answered if a[1] == "get_state"] == [(1, "get_state", True), (3, "get_state", True)]
    assert_protocol_lines(proc.stdout.decode().split("\n")[:-1])
    assert b"Traceback" not in proc.stderr


@pytest.mark.skipif(sys.platform != "linux", reason="closing fd 0 through a shell")
def test_closed_stdin_exits_0(tmp_path: Path) -> None:
    env = _env(tmp_path)
    command = f"exec {sys.executable} -m atomic_host --mode rpc --no-session <&-"
    proc = subprocess.run(["sh", "-c", command], cwd=tmp_path, env=env, capture_output=True, timeout=20)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout == b""
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
