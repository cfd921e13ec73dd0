"""``atomic -p`` streams: plain tokens on a pipe, a live markdown render on a terminal, thinking,
tool calls with a live output tail, a compact result and a final summary line on stderr."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from pm_helpers import SUMMARY_RE, Sandbox, read_until

pytestmark = pytest.mark.slow  # print mode on a pty, reply by reply

THINK = {"type": "thinking", "thinking": "Counting needs a shell."}
BASH_CALL = {
    "type": "toolCall",
    "id": "call-1",
    "name": "bash",
    "arguments": {"command": "for i in 1 2 3 4 5 6; do echo line $i; sleep 0.1; done"},
}
TOOL_TURN = {"content": [THINK, {"type": "text", "text": "Let me count."}, BASH_CALL]}
ANSWER = "# Result\n\nThere are **6** lines."


def test_pipe_prints_tokens_as_they_arrive(tmp_path: Path) -> None:
    text = "first words, then more words, then the last words of the answer."
    box = Sandbox(tmp_path, {"content": text, "chunkDelayMs": 100})
    proc = box.popen("-p", "hi")
    got, first_seen = read_until(proc.stdout, b"first words")
    rest, err = proc.communicate(timeout=10)
    ended = time.monotonic()
    assert proc.returncode == 0, err
    # The opening words were on stdout while most of the answer was still to come (~0.5 s of chunks).
    assert ended - first_seen > 0.3, (ended - first_seen, got)
    assert not got.startswith(text.encode())
    assert (got + rest).decode() == text + "\n"


def test_pipe_keeps_stdout_for_the_answer(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, TOOL_TURN, ANSWER)
    proc = box.run("-p", "count")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Let me count.\n# Result\n\nThere are **6** lines.\n"  # raw markdown, no render
    lines = proc.stderr.splitlines()
    assert lines[:7] == [
        "Counting needs a shell.",
        "● bash(command='for i in 1 2 3 4 5 6; do echo line $i; sleep 0.1; done')",
        "  ⎿ line 1",
        "    line 2",
        "    line 3",
        "    line 4",
        "    … +2 lines",
    ]
    assert re.fullmatch(SUMMARY_RE, lines[7]) and len(lines) == 8, proc.stderr


def test_hide_thinking_and_quiet(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, TOOL_TURN, ANSWER)
    proc = box.run("-p", "count", "--hide-thinking", "-q")
    assert proc.returncode == 0, proc.stderr
    assert "Counting" not in proc.stdout + proc.stderr
    assert proc.stderr.splitlines()[0].startswith("● bash(")
    assert not re.search(SUMMARY_RE, proc.stderr), proc.stderr
    assert proc.stdout.endswith("There are **6** lines.\n")


def test_summary_line_counts_tokens_of_the_run(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, {"content": "ok", "usage": {"input": 1200, "output": 34}})
    proc = box.run("-p", "hi")
    assert proc.returncode == 0, proc.stderr
    [line] = proc.stderr.splitlines()
    assert re.fullmatch(r"faux/faux-1 · 1,200 in · 34 out · \$0\.0000 · \d+\.\ds", line), line


def test_terminal_renders_markdown_while_it_streams(tmp_path: Path) -> None:
    words = " ".join(f"word{i}" for i in range(40))
    box = Sandbox(tmp_path, {"content": f"# Heading\n\nSome **bold** text. {words}", "chunkDelayMs": 40})
    term = box.pty("-p", "hi")
    seen = term.wait_for("Some bold text")
    assert term.proc.poll() is None  # rendered before the run ended
    assert term.finish() == 0
    assert term.ended - seen > 0.4
    screen = term.text()
    assert "**" not in screen and "# Heading" not in screen  # rendered, not raw markdown
    lines = screen.splitlines()
    assert lines[0].strip() == "Heading"
    assert lines[2].startswith("Some bold text. word0 word1")
    assert "word39" in screen and screen.count("word39") == 1 and screen.count("Heading") == 1
    assert re.fullmatch(SUMMARY_RE, lines[-1]), screen


def test_terminal_redraws_at_most_ten_times_a_second(tmp_path: Path) -> None:
    text = " ".join(f"w{i}" for i in range(300))  # ~100 deltas over ~0.6 s
    box = Sandbox(tmp_path, {"content": text, "chunkDelayMs": 6})
    term = box.pty("-p", "hi", "-q")
    assert term.finish() == 0
    span = term.chunks[-1][0] - term.chunks[0][0]  # first to last output: the spinner, then the text
    frames = term.raw.count(b"\r\x1b[2K")  # rich's Live moves back to the top of its region once per redraw
    # ten a second over the span, plus the first draw, the last one at stop and one for a tick
    # falling on either edge of the span (9 frames in 0.70 s was seen); unthrottled would be ~100
    assert 3 <= frames <= 10 * span + 3, (frames, span)
    assert term.text().replace("\n", " ").split() == text.split()


def test_terminal_shows_thinking_dimmed_and_a_live_tool_tail(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, TOOL_TURN, ANSWER)
    term = box.pty("-p", "count")
    term.wait_for("line 3")
    live = term.text()
    assert "Running bash…" in live and "    line 2" in live  # the tail, while the tool still runs
    assert term.finish() == 0
    assert b"\x1b[2;3mCounting needs a shell." in term.raw  # dim italic
    screen = term.text()
    assert "Running bash…" not in screen  # the live tail is gone, the compact result stays
    expected = [
        "Counting needs a shell.",
        "Let me count.",
        "● bash(command='for i in 1 2 3 4 5 6; do echo line $i; sleep 0.1; done')",
        "  ⎿ line 1",
        "    line 2",
        "    line 3",
        "    line 4",
        "    … +2 lines",
    ]
    lines = screen.splitlines()
    assert lines[: len(expected)] == expected, screen
    assert lines[len(expected)].strip() == "Result" and "There are 6 lines." in screen
    assert re.fullmatch(SUMMARY_RE, lines[-1]), screen


def test_terminal_answer_taller_than_the_screen_scrolls_once(tmp_path: Path) -> None:
    items = [f"paragraph {i:02d} of a long answer" for i in range(60)]  # 119 lines on a 40-line screen
    box = Sandbox(tmp_path, {"content": "\n\n".join(items), "chunkDelayMs": 8})
    term = box.pty("-p", "hi", "-q")
    term.wait_for("paragraph 40 of a long answer")
    partial = [line for line in term.text().splitlines() if line]
    *done, streaming = partial  # scrolled so far without a repeated line; the last one still grows
    assert done == items[: len(done)] and items[len(done)].startswith(streaming), partial
    assert len(partial) < 53  # the newest lines were on screen mid-stream (not a head cropped to the screen)
    assert term.finish() == 0
    lines = [line for line in term.text().splitlines() if line]
    assert lines == items  # every line once, in order: settled lines are printed for good, never redrawn
