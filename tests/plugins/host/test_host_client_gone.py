"""The client closes its end of stdout while stdin stays open: the host's next write fails (EPIPE),
and it leaves with 141, as a writer killed by SIGPIPE does, instead of running on unseen."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from atomic_host.testing import host_env


def _host(tmp_path: Path, stdout: Any = subprocess.PIPE) -> tuple[subprocess.Popen[bytes], Path]:
    """``atomic --mode rpc`` (faux) in a sandbox under ``tmp_path``, its stderr in a file."""
    agent, work = tmp_path / "agent", tmp_path / "work"
    agent.mkdir()
    work.mkdir()
    err = tmp_path / "stderr.txt"
    with err.open("wb") as log:  # the child has its own copy of the descriptor
        proc = subprocess.Popen(
            [sys.executable, "-m", "atomic_host", "--mode", "rpc", "--provider", "faux"],
            stdin=subprocess.PIPE, stdout=stdout, stderr=log, cwd=work,
            env=host_env(agent, tmp_path / "faux.jsonl", tmp_path / "faux-log.jsonl"),
        )  # fmt: skip
    return proc, err


def test_a_client_that_stops_reading_mid_stream_ends_the_host_with_141(tmp_path: Path) -> None:
    proc, err = _host(tmp_path)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b'{"type":"bash","command":"yes streamed | head -c 50000000","id":"b"}\n')
    proc.stdin.flush()
    assert b"bash_execution_update" in proc.stdout.read(65536)
    proc.stdout.close()  # the client is gone; it still holds stdin open
    t0 = time.monotonic()
    try:
        assert proc.wait(timeout=20) == 141
    finally:
        proc.kill()
        proc.stdin.close()
    assert time.monotonic() - t0 < 10
    stderr = err.read_text()
    assert "stdout is closed: the client is gone; exiting" in stderr
    assert "Traceback" not in stderr


def test_a_client_that_reads_on_keeps_the_host(tmp_path: Path) -> None:
    """The same command with the client reading to the end: the host answers and stays."""
    proc, err = _host(tmp_path)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b'{"type":"bash","command":"yes streamed | head -c 5000000","id":"b"}\n')
    proc.stdin.write(b'{"type":"get_state","id":"s"}\n')
    proc.stdin.flush()
    lines = iter(proc.stdout.readline, b"")
    assert any(b'"id":"s"' in line and b'"type":"response"' in line for line in lines)
    assert proc.poll() is None
    proc.stdin.close()
    rest = proc.stdout.read()  # the rest of the stream, to EOF: the host exits once it is written
    assert proc.wait(timeout=20) == 0
    assert rest.endswith(b"\n")
    assert "Traceback" not in err.read_text()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_a_stdout_that_takes_nothing_ends_the_host_with_1(tmp_path: Path) -> None:
    """stdout redirected to a full disk (``/dev/full``: every write fails with ENOSPC): one clear
    line and exit 1; before, the write's OSError ended the host with a traceback."""
    with open("/dev/full", "wb") as full:
        proc, err = _host(tmp_path, stdout=full)
    assert proc.stdin is not None
    proc.stdin.write(b'{"type":"get_state"}\n')
    proc.stdin.close()
    assert proc.wait(timeout=30) == 1
    stderr = err.read_text()
    assert "cannot write to stdout (No space left on device); exiting" in stderr
    assert "Traceback" not in stderr
