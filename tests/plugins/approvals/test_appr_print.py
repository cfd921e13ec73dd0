"""Print mode (``-p``) has no one to ask: ``default`` refuses what it would ask about and says so, in
the tool result the model reads and on stderr. Before: there was no mode, every tool ran."""

from __future__ import annotations

import json
from pathlib import Path

from appr_helpers import call
from pm_helpers import Sandbox


def _box(tmp_path: Path, settings: dict | None = None) -> Sandbox:
    steps = [
        {"content": [call("bash", {"command": "echo ran > ran.txt"}, "b1"), call("read", {"path": "a.txt"}, "r1")]},
        "done",
    ]
    box = Sandbox(tmp_path, *steps)
    (box.work / "a.txt").write_text("alpha\n")
    if settings:
        current = json.loads((box.agent / "settings.json").read_text())
        (box.agent / "settings.json").write_text(json.dumps({**current, **settings}))
    return box


def _tool_result(box: Sandbox, call_id: str) -> str:
    last = [json.loads(line) for line in box.log.read_text().splitlines() if line.strip()][-1]
    for message in last["context"]["messages"]:
        if message.get("role") == "toolResult" and message.get("toolCallId") == call_id:
            return "".join(b.get("text", "") for b in message["content"])
    raise AssertionError(call_id)


def test_default_mode_refuses_what_it_would_ask_and_says_so(tmp_path: Path) -> None:
    box = _box(tmp_path)
    proc = box.run("--permission-mode", "default", "-p", "go")
    assert not (box.work / "ran.txt").exists()
    refused = _tool_result(box, "b1")
    assert refused.startswith(
        "bash was not run: the permission mode default asks before bash, and print mode has no one to ask."
    )
    assert "--permission-mode acceptEdits (file edits) or bypassPermissions" in refused
    assert "permissions.allow rule such as Bash(echo ran > ran.txt)" in refused
    assert "alpha" in _tool_result(box, "r1")  # read-only: runs
    assert (
        "atomic: permission: refused bash: echo ran > ran.txt: the permission mode default asks before bash, "
        "and print mode has no one to ask" in proc.stderr
    )
    assert proc.returncode == 0 and proc.stdout.strip().endswith("done")


def test_an_allow_rule_or_bypass_lets_it_run_in_print_mode(tmp_path: Path) -> None:
    box = _box(tmp_path, {"permissions": {"defaultMode": "default", "allow": ["Bash(echo ran > ran.txt)"]}})
    proc = box.run("-p", "go")
    assert (box.work / "ran.txt").read_text() == "ran\n", proc.stderr
    (tmp_path / "second").mkdir()
    box = _box(tmp_path / "second")
    box.run("--permission-mode", "bypassPermissions", "-p", "go")
    assert (box.work / "ran.txt").read_text() == "ran\n"


def test_json_mode_refuses_too(tmp_path: Path) -> None:
    box = _box(tmp_path)
    proc = box.run("--mode", "json", "--permission-mode", "default", "-p", "go")
    assert not (box.work / "ran.txt").exists()
    ends = [e for e in map(json.loads, proc.stdout.splitlines()) if e.get("type") == "tool_execution_end"]
    assert ends[0]["isError"] and "and --mode json has no one to ask" in ends[0]["result"]["content"][0]["text"]
    assert not [e for e in map(json.loads, proc.stdout.splitlines()) if e.get("method") == "select"]
