"""What ``atomic -p`` sends: the prompt plus piped stdin, stdin alone, and never a terminal's stdin;
``-p "/command"`` shows what the command said."""

from __future__ import annotations

import re
from pathlib import Path

from pm_helpers import PLUGINS, SUMMARY_RE, Sandbox

DIFF = "diff --git a/x.py b/x.py\n-old line\n+new line\n"


def test_piped_text_follows_the_prompt_after_a_blank_line(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, "looks fine")
    proc = box.run("-p", "review this", stdin=DIFF.encode())
    assert proc.returncode == 0, proc.stderr
    assert box.prompts() == ["review this\n\ndiff --git a/x.py b/x.py\n-old line\n+new line"]
    assert proc.stdout == "looks fine\n"


def test_piped_text_is_the_prompt_when_p_has_none(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, "4")
    proc = box.run("-p", stdin=b"what is 2+2?\n")
    assert proc.returncode == 0, proc.stderr
    assert box.prompts() == ["what is 2+2?"]


def test_empty_stdin_leaves_the_prompt_alone(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, "hi")
    assert box.run("-p", "hello", stdin=None).returncode == 0  # /dev/null
    assert box.run("-p", "hello again", stdin=b"").returncode == 0
    assert box.prompts() == ["hello", "hello again"]


def test_no_prompt_anywhere_is_refused(tmp_path: Path) -> None:
    proc = Sandbox(tmp_path).run("-p", stdin=b"  \n")
    assert proc.returncode == 2
    assert proc.stderr == 'atomic: no prompt: atomic -p "PROMPT", or pipe one in: echo "PROMPT" | atomic -p\n'


def test_a_terminal_on_stdin_is_never_read(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, "from the model")
    term = box.pty("-p", "hi", "-q")  # stdin is the terminal: reading it would wait for typing
    assert term.finish(timeout=5) == 0
    assert box.prompts() == ["hi"]
    assert term.text() == "from the model"
    term = box.pty("-p")
    assert term.finish(timeout=5) == 2
    assert term.text() == 'atomic: no prompt: atomic -p "PROMPT", or pipe one in: echo "PROMPT" | atomic -p'


def test_command_output_and_dialogs_without_a_ui(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    proc = box.run("-e", str(PLUGINS / "pm_commands.py"), "-p", "/greet Ann")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "hello Ann\n"
    assert proc.stderr.splitlines() == [
        'atomic: "Really greet?" asks for input (confirm), but print mode has no UI: answered no',
        'atomic: "Pick a colour" asks for input (select), but print mode has no UI: answered with no choice',
        "confirmed=False choice=None",
    ]
    assert not box.log.exists()  # no model call


def test_command_on_a_terminal(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    term = box.pty("-e", str(PLUGINS / "pm_commands.py"), "-p", "/greet")
    assert term.finish() == 0
    assert term.text().splitlines()[0] == "hello world"
    assert "confirmed=False choice=None" in term.text()
    assert not re.search(SUMMARY_RE, term.text())  # no model ran: no summary line


def test_failing_command_exits_1(tmp_path: Path) -> None:
    proc = Sandbox(tmp_path).run("-e", str(PLUGINS / "pm_commands.py"), "-p", "/boom")
    assert proc.returncode == 1
    assert "boom in command" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout == ""
