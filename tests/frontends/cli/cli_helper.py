"""Runs the real ``atomic`` process in a sandboxed agent dir for the command-line tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from atomic_host.testing import inherited_env


def atomic(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None, stdout: int | None = None, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    """``atomic ARGS`` with its agent dir and working dir under ``tmp_path``, no API keys (unless
    ``env`` adds some); ``stdout``: a file descriptor instead of a pipe."""
    base = inherited_env()
    base.update(ATOMIC_CODING_AGENT_DIR=str(tmp_path / "agent"), COLUMNS="80", **(env or {}))
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "atomic_host", *args],
        input=stdin,
        stdout=subprocess.PIPE if stdout is None else stdout,
        stderr=subprocess.PIPE,
        env=base,
        cwd=work,
        timeout=60,
    )
