"""validate_output_line on good and bad records, event models, and import cost."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from atomic_host.core.protocol.events import EVENTS, OutputError, validate_output_line

USAGE = {
    "input": 1,
    "output": 2,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 3,
    "cost": {"input": 0, "output": 0.1, "cacheRead": 0, "cacheWrite": 0, "total": 0.1},
}
ASSISTANT = {
    "role": "assistant",
    "content": [],
    "api": "faux",
    "provider": "faux",
    "model": "m",
    "usage": USAGE,
    "stopReason": "pending",
    "timestamp": 1733234567890,
}
TOOL_RESULT = {
    "role": "toolResult",
    "toolCallId": "c1",
    "toolName": "read",
    "content": [{"type": "text", "text": "x"}],
    "isError": False,
    "timestamp": 1,
}
MODEL = {
    "id": "m",
    "name": "M",
    "api": "faux",
    "provider": "faux",
    "baseUrl": "",
    "reasoning": True,
    "input": ["text"],
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
    "contextWindow": 1000,
    "maxTokens": 100,
}

GOOD = [
    {"type": "agent_settled"},
    {"type": "message_start", "message": ASSISTANT},
    {"type": "message_update", "usage": USAGE, "assistantMessageEvent": {"type": "start"}},
    {
        "type": "message_update",
        "usage": USAGE,
        "endTurn": True,
        "assistantMessageEvent": {
            "type": "toolcall_end",
            "contentIndex": 0,
            "toolCall": {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}},
        },
    },
    {
        "type": "message_update",
        "usage": USAGE,
        "assistantMessageEvent": {"type": "done", "reason": "toolUse"},
    },
    {"type": "message_end", "message": ASSISTANT | {"stopReason": "toolUse", "errorMessage": "x"}},
    {"type": "turn_end", "message": ASSISTANT | {"stopReason": "stop"}, "toolResults": [TOOL_RESULT]},
    {
        "type": "tool_execution_end",
        "toolCallId": "c1",
        "toolName": "read",
        "isError": True,
        "result": {"content": [{"type": "text", "text": "boom"}], "details": None},
    },
    {"type": "bash_execution_update", "id": 7, "channel": "stderr", "delta": "w\n"},
    {"type": "compaction_end", "reason": "manual", "result": None, "aborted": True, "willRetry": False},
    {"type": "auto_retry_end", "success": False, "finalError": "Retry cancelled"},
    {"type": "model_changed", "model": MODEL, "previousModel": None, "source": "set"},
    {"type": "thinking_level_changed", "level": "high"},
    {"type": "session_info_changed", "name": "work"},
    {"type": "entry_appended", "entry": {"type": "custom", "id": "ab12cd34", "parentId": None}},
    {"type": "extension_ui_request", "id": "u1", "method": "confirm", "title": "Sure?", "timeout": 1000},
    {"type": "extension_error", "extensionPath": "command:x", "event": "command", "error": "boom"},
    {"type": "response", "command": "abort", "success": True, "id": 3},
    {"type": "response", "command": "parse", "success": False, "error": "Failed to parse command: x"},
    {"type": "response", "command": "unknown", "success": False, "error": "Unknown command: undefined"},
    {"type": "response", "command": "set_thinking_level", "success": True},
    {"type": "response", "command": "cycle_thinking_level", "success": True, "data": None},
    {"type": "response", "command": "set_model", "success": True, "data": MODEL},
    {
        "type": "response",
        "command": "get_state",
        "success": True,
        "data": {
            "model": None,
            "thinkingLevel": "off",
            "isStreaming": False,
            "isCompacting": False,
            "steeringMode": "one-at-a-time",
            "followUpMode": "one-at-a-time",
            "sessionId": "s",
            "autoCompactionEnabled": True,
            "messageCount": 0,
            "pendingMessageCount": 0,
        },
    },
    {"type": "response", "command": "get_entries", "success": True, "data": {"entries": [], "leafId": None}},
    {
        "type": "response",
        "command": "bash",
        "success": True,
        "data": {"output": "", "cancelled": True, "truncated": False},
    },
    {"type": "response", "command": "list_workflow_runs", "success": True, "data": {"runs": []}},
    {"type": "response", "command": "login_provider", "success": True, "data": {"anything": 1}},
]

BAD = [
    ([1], "not an object"),
    ("{not json", "not JSON"),
    ({"type": "agent_started"}, "unknown output record type"),
    ({"command": "abort", "success": True}, "unknown output record type"),
    ({"type": "agent_start", "id": "r1"}, "must not carry an id"),
    ({"type": "response", "command": "abort", "success": "yes"}, "success must be true or false"),
    ({"type": "response", "command": "abort", "success": True, "data": None}, "data must be absent"),
    ({"type": "response", "command": "get_state", "success": True}, "data is required"),
    ({"type": "response", "command": "get_state", "success": True, "data": None}, "must not be null"),
    ({"type": "response", "command": "set_model", "success": False}, "error"),
    (
        {"type": "response", "command": "prompt", "success": True, "data": {"disposition": "done"}},
        "disposition",
    ),
    ({"type": "message_start", "message": ASSISTANT | {"stopReason": "finished"}}, "stopReason"),
    (
        {"type": "message_update", "usage": USAGE, "assistantMessageEvent": {"type": "text_delta"}},
        "contentIndex",
    ),
    ({"type": "bash_execution_update", "channel": "stdin", "delta": ""}, "channel"),
    ({"type": "queue_update", "steering": [], "followUp": [1]}, "followUp"),
    ({"type": "turn_end", "message": ASSISTANT}, "toolResults"),
    ({"type": "message_end", "message": {"role": "robot", "timestamp": 1}}, "message"),
]


@pytest.mark.parametrize("record", GOOD, ids=lambda r: r.get("type") + ":" + str(r.get("command", "")))
def test_good_records_validate(record: dict) -> None:
    validate_output_line(record)
    validate_output_line(json.dumps(record) + "\n")


@pytest.mark.parametrize(("record", "fragment"), BAD, ids=lambda v: v if isinstance(v, str) else None)
def test_bad_records_are_rejected(record: object, fragment: str) -> None:
    with pytest.raises(OutputError, match=fragment):
        validate_output_line(record)


def test_event_models_dump_to_the_wire() -> None:
    event = EVENTS["bash_execution_update"](id="req-1", channel="stdout", delta="x")
    assert event.to_wire() == {
        "type": "bash_execution_update",
        "id": "req-1",
        "channel": "stdout",
        "delta": "x",
    }
    end = EVENTS["compaction_end"](
        reason="overflow",
        result=None,
        aborted=False,
        will_retry=False,
        error_message="Context overflow recovery failed: x",
    )
    wire = end.to_wire()
    assert wire["result"] is None and wire["willRetry"] is False and "unresolvedOverflow" not in wire
    validate_output_line(wire)


def test_importing_the_package_is_cheap() -> None:
    code = (
        "import sys, atomic_host.core.protocol as p\n"
        "assert 'pydantic' not in sys.modules, 'package import pulled in pydantic'\n"
        "from atomic_host.core.protocol import commands\n"
        "assert not any(c.__pydantic_complete__ for c in commands.COMMANDS.values()), 'built at import'\n"
        "p.parse_command({'type': 'get_state'})\n"
        "assert not commands.GetStateCommand.__pydantic_complete__, 'get_state built a validator'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
