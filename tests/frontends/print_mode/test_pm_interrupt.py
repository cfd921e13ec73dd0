"""Ctrl-C in print mode: the run is aborted, the session kept, exit 130, no traceback; a second
Ctrl-C exits at once."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from pm_helpers import PLUGINS, Sandbox, read_until

SLOW = {"content": "the start of a long answer " + "and more " * 40, "chunkDelayMs": 100}
NOTICE = "atomic: interrupted; stopping the run (Ctrl-C again to quit at once)"


def test_ctrl_c_on_a_terminal_aborts_and_keeps_the_session(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, SLOW, keep=True)
    term = box.pty("-p", "hi", "-q")
    term.wait_for("the start of")
    assert not term.echo()  # typed keys would break the live region: echo is off while it runs
    term.interrupt()  # a real ^C typed into the terminal: SIGINT from the line discipline
    assert term.finish(timeout=5) == 130
    assert NOTICE.encode() in term.raw  # drawn under the answer while the run stopped
    assert term.echo_after  # and back on afterwards
    screen = term.text()
    assert "Traceback" not in screen and "KeyboardInterrupt" not in screen
    lines = screen.splitlines()  # the ^C echo did not garble it, the notice went with the live region
    assert len(lines) == 2 and lines[0].startswith("the start of") and lines[1] == "aborted", screen
    [entries] = box.sessions()
    messages = [e["message"] for e in entries if e["type"] == "message"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["stopReason"] == "aborted"
    assert messages[1]["content"][0]["text"].startswith("the start of")


def test_sigint_through_pipes(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, SLOW)
    proc = box.popen("-p", "hi")
    read_until(proc.stdout, b"the start of")
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=5)
    assert proc.returncode == 130
    lines = err.decode().splitlines()
    assert lines[:3] == ["", NOTICE, "aborted"], err
    assert b"Traceback" not in err


def test_second_ctrl_c_exits_at_once(tmp_path: Path) -> None:
    call = {"type": "toolCall", "id": "s1", "name": "stubborn", "arguments": {}}
    box = Sandbox(tmp_path, {"content": [call]}, "never reached")
    proc = box.popen("-e", str(PLUGINS / "pm_stubborn.py"), "-p", "go")
    read_until(proc.stderr, b"stubborn()")
    proc.send_signal(signal.SIGINT)
    read_until(proc.stderr, b"Ctrl-C again")
    time.sleep(0.3)
    assert proc.poll() is None  # the tool ignores the abort: the first Ctrl-C waits for it
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=5)
    assert proc.returncode == 130
    assert time.monotonic() - sent < 1.0
    assert err.decode().endswith("atomic: interrupted\n") and b"Traceback" not in err


def test_ctrl_c_while_waiting_for_the_model(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, {"content": "late", "delayMs": 5000})
    term = box.pty("-p", "hi", "-q")
    term.wait_for("Thinking…")
    term.interrupt()
    assert term.finish(timeout=5) == 130
    assert "Traceback" not in term.text() and "late" not in term.text()
