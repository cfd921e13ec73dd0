"""parse_command error messages: short, stable, field names in wire spelling."""

from __future__ import annotations

import pytest

from atomic_host.core.protocol.validate import CommandError, parse_command

CASES = [
    ({"type": "set_model", "provider": "a"}, "set_model", "Missing required field: modelId"),
    (
        {"type": "set_model", "provider": "a", "modelId": 5},
        "set_model",
        "Invalid field modelId: expected string",
    ),
    ({"type": "prompt"}, "prompt", "Missing required field: message"),
    ({"type": "prompt", "message": None}, "prompt", "Invalid field message: expected string"),
    (
        {"type": "prompt", "message": "x", "streamingBehavior": "now"},
        "prompt",
        "Invalid field streamingBehavior: expected 'steer' or 'followUp'",
    ),
    ({"type": "prompt", "message": "x", "images": "a.png"}, "prompt", "Invalid field images: expected array"),
    (
        {"type": "prompt", "message": "x", "images": [{"type": "image", "data": "QQ=="}]},
        "prompt",
        "Missing required field: images[0].mimeType",
    ),
    (
        {"type": "prompt", "message": "x", "images": [{"type": "text", "data": "Q", "mimeType": "i"}]},
        "prompt",
        "Invalid field images[0].type: expected 'image'",
    ),
    (
        {"type": "set_auto_retry", "enabled": "true"},
        "set_auto_retry",
        "Invalid field enabled: expected boolean",
    ),
    ({"type": "set_auto_retry", "enabled": 1}, "set_auto_retry", "Invalid field enabled: expected boolean"),
    (
        {"type": "set_steering_mode", "mode": "some"},
        "set_steering_mode",
        "Invalid field mode: expected 'all' or 'one-at-a-time'",
    ),
    (
        {"type": "navigate_tree", "targetId": "t", "options": {"summarize": "yes"}},
        "navigate_tree",
        "Invalid field options.summarize: expected boolean",
    ),
    (
        {"type": "navigate_tree", "targetId": "t", "options": []},
        "navigate_tree",
        "Invalid field options: expected object",
    ),
    ({"type": "switch_session"}, "switch_session", "Missing required field: sessionId"),
    (
        {"type": "get_state", "id": {"x": 1}},
        "get_state",
        "Invalid field id: expected a string, number, boolean or null",
    ),
    (
        {"type": "abort_bash", "requestId": [1]},
        "abort_bash",
        "Invalid field requestId: expected a string, number, boolean or null",
    ),
    ({"type": "context_compact"}, "context_compact", "Unknown command: context_compact"),
    ({"type": "nope", "id": 3}, "nope", "Unknown command: nope"),
    ({"id": "r1"}, "unknown", "Unknown command: undefined"),
    ({"type": None}, "unknown", "Unknown command: undefined"),
    ([], "unknown", "Invalid command: expected a JSON object, got array"),
    ("get_state", "unknown", "Invalid command: expected a JSON object, got string"),
    (None, "unknown", "Invalid command: expected a JSON object, got null"),
    (3, "unknown", "Invalid command: expected a JSON object, got number"),
]


@pytest.mark.parametrize(("obj", "command", "message"), CASES)
def test_error_message(obj: object, command: str, message: str) -> None:
    with pytest.raises(CommandError) as info:
        parse_command(obj)
    assert info.value.message == message
    assert str(info.value) == message
    assert info.value.command == command


def test_strings_are_not_coerced_to_numbers_or_back() -> None:
    with pytest.raises(CommandError, match="expected string"):
        parse_command({"type": "fork", "entryId": 12})
    with pytest.raises(CommandError, match="expected boolean"):
        parse_command({"type": "set_model", "provider": "a", "modelId": "b", "persist": "yes"})
