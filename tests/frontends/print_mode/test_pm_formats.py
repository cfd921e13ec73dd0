"""``--output-format json|stream-json``: the records ``claude -p`` users script against."""

from __future__ import annotations

import json
from pathlib import Path

from pm_helpers import PLUGINS, Sandbox

CALL = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "echo hi"}}
USAGE_KEYS = {"input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"}


def test_json_is_one_result_object(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, {"content": [CALL], "usage": {"input": 10, "output": 3}}, "It printed **hi**.")
    proc = box.run("-p", "go", "--output-format", "json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("\n") == 1 and proc.stderr == ""
    result = json.loads(proc.stdout)
    assert set(result) == {
        "type", "subtype", "is_error", "result", "session_id", "model", "num_turns", "duration_ms",
        "stop_reason", "total_cost_usd", "usage",
    }  # fmt: skip
    assert (result["type"], result["subtype"], result["is_error"]) == ("result", "success", False)
    assert result["result"] == "It printed **hi**."
    assert result["model"] == "faux/faux-1" and result["num_turns"] == 2 and result["stop_reason"] == "stop"
    assert set(result["usage"]) == USAGE_KEYS and result["usage"]["output_tokens"] >= 3
    assert result["total_cost_usd"] == 0.0 and result["duration_ms"] > 0
    assert len(result["session_id"]) == 36


def test_json_reports_a_failed_run(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, {"content": [], "stopReason": "error", "errorMessage": "400 invalid request: bad field"})
    proc = box.run("-p", "go", "--output-format", "json")
    assert proc.returncode == 1
    result = json.loads(proc.stdout)
    assert (result["subtype"], result["is_error"], result["error"]) == (
        "error_during_execution",
        True,
        "400 invalid request: bad field",
    )


def test_stream_json_is_one_object_per_line(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, {"content": [CALL]}, "done")
    proc = box.run("-p", "go", "--output-format", "stream-json")
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [(r["type"], r.get("subtype")) for r in records] == [
        ("system", "init"),
        ("assistant", None),
        ("user", None),
        ("assistant", None),
        ("result", "success"),
    ]
    init, call, tool, answer, result = records
    assert init["model"] == "faux/faux-1" and "bash" in init["tools"]
    assert {r["session_id"] for r in records} == {init["session_id"]}
    assert call["message"]["content"][0]["name"] == "bash"
    assert tool["message"]["role"] == "toolResult" and tool["message"]["content"][0]["text"] == "hi\n"
    assert answer["message"]["content"] == [{"type": "text", "text": "done"}]
    assert result["result"] == "done"


def test_stream_json_carries_command_notifications(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    proc = box.run("-e", str(PLUGINS / "pm_commands.py"), "-p", "/greet Bo", "--output-format", "stream-json")
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    notes = [(r["level"], r["message"]) for r in records if r.get("subtype") == "notification"]
    assert notes[0] == ("info", "hello Bo") and notes[-1] == ("warning", "confirmed=False choice=None")
    assert records[-1]["result"] == "hello Bo\nconfirmed=False choice=None" and records[-1]["num_turns"] == 0


def test_output_format_needs_print_mode(tmp_path: Path) -> None:
    proc = Sandbox(tmp_path).run("--output-format", "json", faux=False)
    assert proc.returncode == 2
    assert "--output-format, --hide-thinking and -q/--quiet apply to print mode (-p)" in proc.stderr
