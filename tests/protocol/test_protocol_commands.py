"""Every declared command has its model, parses, and round-trips in wire spelling."""

from __future__ import annotations

import typing

import pytest

from atomic_host.core.protocol.commands import COMMANDS, Command
from atomic_host.core.protocol.declarations import DECLARATIONS
from atomic_host.core.protocol.validate import parse_command

# One fully populated example per command, in wire spelling.
FULL_EXAMPLES: dict[str, dict[str, typing.Any]] = {
    "prompt": {
        "message": "hi",
        "images": [{"type": "image", "data": "QQ==", "mimeType": "image/png"}],
        "streamingBehavior": "followUp",
    },
    "steer": {"message": "s", "images": [{"type": "image", "data": "QQ==", "mimeType": "image/png"}]},
    "follow_up": {"message": "f"},
    "new_session": {"parentSession": "p"},
    "delete_session": {"sessionId": "s1"},
    "set_model": {"provider": "anthropic", "modelId": "m", "persist": True},
    "cycle_model": {"direction": "backward", "persist": False},
    "logout_provider": {"provider": "openai"},
    "set_thinking_level": {"level": "xhigh", "persist": True},
    "set_steering_mode": {"mode": "all"},
    "set_follow_up_mode": {"mode": "one-at-a-time"},
    "compact": {"customInstructions": "keep tests"},
    "set_auto_compaction": {"enabled": False},
    "set_auto_retry": {"enabled": True},
    "bash": {"command": "ls", "excludeFromContext": True},
    "user_bash": {"command": "ls"},
    "abort_bash": {"requestId": "req-1"},
    "export_html": {"outputPath": "/tmp/x.html"},
    "switch_session": {"sessionId": "abc", "sessionDirectory": "/d", "cwdOverride": "/c"},
    "start_pending_recovery": {"reason": "workflow_stage_resume"},
    "fork": {"entryId": "e1"},
    "get_entries": {"since": "e1"},
    "set_session_name": {"name": "n"},
    "list_workflow_runs": {"status": "awaiting_input"},
    "get_workflow_run_summary": {"runId": "019fdf86-cf98-7327-8a73-21365028f6ae"},
    "navigate_tree": {
        "targetId": "t",
        "options": {"summarize": True, "customInstructions": "c", "replaceInstructions": False, "label": "l"},
    },
    "set_label": {"entryId": "e", "label": "x"},
    "import_session": {"inputPath": "/a.jsonl", "cwdOverride": "/c"},
    "login_provider": {"provider": "p", "apiKey": "k", "authType": "oauth", "loginId": "l1"},
    "save_provider_credential": {"provider": "p", "credential": {"type": "api_key", "key": "k"}},
    "cancel_login_provider": {"provider": "p", "loginId": "l1"},
    "refresh_models": {"timeoutMs": 5000, "force": True, "allowNetwork": False},
    "get_command_completions": {"commandName": "c", "argumentPrefix": "a"},
    "invoke_shortcut": {"key": "ctrl+shift+f"},
    "extension_ui_response": {"id": "u1", "value": "v", "confirmed": True, "cancelled": False},
}


def test_every_declared_command_has_its_model() -> None:
    assert list(COMMANDS) == list(DECLARATIONS)
    for name, decl in DECLARATIONS.items():
        model = COMMANDS[name]
        assert model.__name__ == decl.model_name and model.__doc__ == decl.cls.__doc__
        assert set(model.model_fields) - {"type", "id"} == set(decl.fields) - {"id"}


def test_every_command_with_fields_has_a_full_example() -> None:
    assert {name for name, decl in DECLARATIONS.items() if not decl.bare} == set(FULL_EXAMPLES)


def test_union_holds_every_command_model() -> None:
    members = typing.get_args(typing.get_args(Command)[0])
    assert set(members) == set(COMMANDS.values())
    for name, cls in COMMANDS.items():
        assert cls.model_fields["type"].default == name


@pytest.mark.parametrize("name", list(COMMANDS))
def test_full_example_round_trips(name: str) -> None:
    wire = {"id": f"req-{name}", "type": name, **FULL_EXAMPLES.get(name, {})}
    cmd = parse_command(wire)
    assert type(cmd) is COMMANDS[name]
    assert cmd.model_dump(by_alias=True, exclude_none=True) == wire
    assert cmd.to_wire() == wire


def test_snake_case_attributes_and_names_accepted() -> None:
    cmd = parse_command({"type": "set_model", "provider": "a", "model_id": "b"})
    assert cmd.model_id == "b"
    assert cmd.to_wire() == {"type": "set_model", "provider": "a", "modelId": "b"}
    prompt = parse_command(FULL_EXAMPLES["prompt"] | {"type": "prompt"})
    assert prompt.streaming_behavior == "followUp"
    assert prompt.images[0].mime_type == "image/png"


def test_extra_keys_are_kept() -> None:
    cmd = parse_command({"type": "get_state", "clientVersion": "1.2", "id": 7})
    assert cmd.id == 7
    assert cmd.to_wire() == {"type": "get_state", "clientVersion": "1.2", "id": 7}
    cmd = parse_command({"type": "prompt", "message": "x", "source": {"ui": "web"}})
    assert cmd.model_extra == {"source": {"ui": "web"}}


@pytest.mark.parametrize("request_id", ["a", 1, 2.5, True, None])
def test_id_is_any_json_scalar(request_id: object) -> None:
    for kind, extra in (("get_state", {}), ("fork", {"entryId": "e"})):
        assert parse_command({"type": kind, "id": request_id, **extra}).id == request_id


def test_delete_session_may_omit_session_id() -> None:
    cmd = parse_command({"type": "delete_session", "id": "019fdf86"})
    assert cmd.session_id is None and cmd.id == "019fdf86"


def test_switch_session_accepts_the_older_session_path() -> None:
    cmd = parse_command({"type": "switch_session", "sessionPath": "/s/a.jsonl"})
    assert cmd.session_path == "/s/a.jsonl" and cmd.session_id is None


def test_models_can_be_built_in_python_and_dumped() -> None:
    cmd = COMMANDS["set_label"](entry_id="e1")
    assert cmd.to_wire() == {"type": "set_label", "entryId": "e1"}
