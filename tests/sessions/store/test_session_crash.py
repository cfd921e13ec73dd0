"""SIGKILL a writer mid-loop: every entry it acknowledged must survive (every backend)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from builtin_plugins.stores import open_builtin_store as open_store

SCRIPT = r"""
import sys
from builtin_plugins.stores import open_builtin_store as open_store
kind, agent = sys.argv[1], sys.argv[2]
store = open_store(kind, agent, None, "/crash")
s = store.new_session("/crash")
s.append_message({"role": "user", "content": "go", "timestamp": 1})
s.append_message({"role": "assistant", "content": [], "provider": "p", "model": "m", "stopReason": "stop",
                  "timestamp": 2})
print("ID", s.id, flush=True)
i = 0
while True:
    e = s.append_message({"role": "user", "content": "x" * (i % 3000), "timestamp": 3 + i})
    print("ACK", e["id"], flush=True)
    i += 1
"""


def _acknowledged(lines: list[str]) -> list[str]:
    """The ids of the complete ``ACK <id>`` lines: a line cut by the kill acknowledges nothing."""
    return [line.split()[1] for line in lines if line.startswith("ACK ") and line.endswith("\n")]


@pytest.mark.parametrize("kind", ["jsonl", "sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
def test_acknowledged_entries_survive_sigkill(kind, tmp_path, request, monkeypatch):
    if kind == "postgres":  # a real server (tests/pg_helpers.py); the child inherits the URL
        monkeypatch.setenv("ATOMIC_DATABASE_URL", request.getfixturevalue("postgres_server").fresh_url())
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, kind, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    session_id = proc.stdout.readline().split()[1]
    lines = []
    deadline = time.monotonic() + 0.7
    while time.monotonic() < deadline:
        lines.append(proc.stdout.readline())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    lines += proc.stdout.read().splitlines(keepends=True)
    acked = _acknowledged(lines)
    assert len(acked) > 5
    store = open_store(kind, tmp_path, None, "/crash")
    reopened = store.open(session_id)
    ids = {e["id"] for e in reopened.entries}
    assert set(acked) <= ids
    # The reopened session stays writable and valid after the crash.
    entry = reopened.append_message({"role": "user", "content": "after", "timestamp": 0})
    assert store.open(session_id).leaf_id == entry["id"]
    store.close()
