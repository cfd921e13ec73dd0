"""``atomic -p … | head``: the reader of stdout leaves mid-answer. The run stops, the session keeps
what came, one line on stderr says so, exit 141 (a SIGPIPE death's status), no traceback; before,
the renderer's BrokenPipeError went into the run ("could not save the session") with tracebacks."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from pm_helpers import Sandbox, read_until

SLOW = {"content": "the start of a long answer\n" + "and more\n" * 400, "chunkDelayMs": 20}
NOTICE = "atomic: stdout is closed; stopping the run"


@pytest.mark.parametrize("args", [("-p", "hi"), ("--mode", "json", "-p", "hi")], ids=["text", "events"])
def test_a_reader_that_leaves_stops_the_run_with_141(tmp_path: Path, args: tuple[str, ...]) -> None:
    """Text and the host's events stream each delta (``--output-format stream-json`` writes a record
    per message, through the same guarded renderer: its answer would be whole when a write failed)."""
    box = Sandbox(tmp_path, SLOW, keep=True)
    proc = box.popen(*args)
    assert proc.stdout is not None and proc.stderr is not None
    read_until(proc.stdout, b"the start of")
    proc.stdout.close()  # as head does once it has its lines
    try:
        assert proc.wait(timeout=15) == 141
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    err = proc.stderr.read().decode()
    assert err.splitlines() == [NOTICE], err
    [entries] = box.sessions()
    messages = [e["message"] for e in entries if e["type"] == "message"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["stopReason"] == "aborted"
    assert messages[1]["content"][0]["text"].startswith("the start of")


def test_a_reader_that_reads_everything_gets_the_whole_answer(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, {"content": "all of it\n" * 50})
    run = box.run("-p", "hi", "-q")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "all of it\n" * 50


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_a_stdout_that_takes_nothing_stops_the_run_with_1(tmp_path: Path) -> None:
    """``atomic -p … > /dev/full`` (a full disk): one line on stderr, exit 1; before, the write's
    ENOSPC came back from the stream as "Provider error: [Errno 28] No space left on device"."""
    box = Sandbox(tmp_path, {"content": "an answer with nowhere to go\n" * 20})
    with open("/dev/full", "wb") as full:
        proc = box.popen("-p", "hi", stdout=full)
        _out, err = proc.communicate(timeout=15)
    assert proc.returncode == 1
    assert err.decode().splitlines() == ["atomic: cannot write to stdout (No space left on device); stopping the run"]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_a_stderr_that_takes_nothing_costs_no_answer(tmp_path: Path) -> None:
    """``2>/dev/full``: the tool lines, notices and summary that go to stderr are lost, the answer
    on stdout is whole and the run ends 0 (the summary's ENOSPC ended it with 1, a tool line's
    would have stopped it as a failed stdout)."""
    tool = {"type": "toolCall", "name": "bash", "arguments": {"command": "echo from-the-tool"}}
    box = Sandbox(tmp_path, {"content": [tool]}, {"content": "the answer\n"})
    with open("/dev/full", "wb") as full:
        proc = box.popen("-p", "hi", stderr=full)
        out, _err = proc.communicate(timeout=15)
    assert proc.returncode == 0
    assert out.decode() == "the answer\n"
