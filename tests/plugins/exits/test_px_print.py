"""A plugin cannot end ``atomic -p`` (issue 23): the same exits as over RPC, in a tool handler and
the ``tool_call`` gate of one run, in a slash command and in a provider's stream. Each is reported
once on stderr, the run goes on to its answer, and the exit status says what happened (1: a gate
failed, a command failed, the provider's reply is an error). Before the fix ``-p`` ended with the
plugin's status (2, 3, 4) and no message."""

from __future__ import annotations

from pathlib import Path

import pytest
from pm_helpers import Sandbox
from px_helper import HOWS, TEXTS, ext, px_call, report


def _sandbox(tmp_path: Path, how: str, *steps) -> Sandbox:
    box = Sandbox(tmp_path, *steps)
    box.env["PX_HOW"] = how
    return box


@pytest.mark.parametrize("how", HOWS)
def test_exits_in_a_tool_and_its_gate_end_neither_the_run_nor_the_host(how: str, tmp_path: Path) -> None:
    both = {"content": [*px_call("gate", "g1")["content"], *px_call("tool", "t1")["content"]]}
    proc = _sandbox(tmp_path, how, both, "the answer").run("-e", ext("px_exits"), "-p", "go")
    assert proc.stdout == "the answer\n"
    assert proc.returncode == 1  # a gate failed: so did the run
    gate = f"extension error in {ext('px_exits')} (tool_call): {report(how, '_px_how')}"
    assert proc.stderr.count(gate) == 1 and "failed in tool_call" not in proc.stderr  # printed once
    assert f"⎿ {TEXTS[how]}" in proc.stderr  # the tool's error result
    assert "⎿ px_tool ran" in proc.stderr  # the failed gate had no opinion


@pytest.mark.parametrize("how", HOWS)
def test_an_exit_in_a_command_is_reported_once(how: str, tmp_path: Path) -> None:
    proc = _sandbox(tmp_path, how).run("-e", ext("px_exits"), "-p", "/px")
    assert proc.returncode == 1
    line = f"extension error in command:px (command): {report(how, '_px_how')}"
    assert proc.stderr.count(line) == 1 and proc.stderr.count(report(how, "_px_how")) == 1, proc.stderr


@pytest.mark.parametrize("how", HOWS)
def test_an_exit_in_a_provider_stream_is_its_error(how: str, tmp_path: Path) -> None:
    proc = _sandbox(tmp_path, how).run("-e", ext("px_exits"), "--model", "pxexit/boom", "-p", "hi", "-q")
    assert proc.returncode == 1
    assert f"Provider error: {TEXTS[how]}" in proc.stderr
