"""Conformance: every JSON example of rpc-protocol.md validates against the models.

Examples are the ```json blocks; a block is one value or one value per line. Placeholders such as
``{...}`` are not JSON and those values are skipped; ``[...]`` is read as an empty list.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter
from suite_paths import DOCS

from atomic_host.core.protocol.commands import COMMANDS
from atomic_host.core.protocol.events import EVENTS, validate_output_line
from atomic_host.core.protocol.messages import AgentMessage
from atomic_host.core.protocol.model import Model
from atomic_host.core.protocol.validate import parse_command

_CANDIDATES = [
    os.environ.get("ATOMIC_RPC_SPEC", ""),
    str(DOCS / "spec" / "rpc-protocol.md"),
    "/work/shared/spec/rpc-protocol.md",
]
SPEC = next((Path(p) for p in _CANDIDATES if p and Path(p).is_file()), None)
pytestmark = pytest.mark.skipif(SPEC is None, reason="rpc-protocol.md not found (set ATOMIC_RPC_SPEC)")


def _examples() -> list[Any]:
    assert SPEC is not None
    text = SPEC.read_text(encoding="utf-8")
    values: list[Any] = []
    for block in re.findall(r"```json\n(.*?)```", text, flags=re.S):
        block = block.replace("[...]", "[]")
        try:
            values.append(json.loads(block))
            continue
        except ValueError:
            pass
        for line in block.splitlines():
            try:
                values.append(json.loads(line))
            except ValueError:
                continue  # a placeholder such as {...}
    # The summaries table shows commands as inline code.
    for inline in re.findall(r"`(\{\"type\":[^`]*\})`", text):
        values.append(json.loads(inline))
    return values


def _classify(value: Any) -> str:
    if not isinstance(value, dict):
        return "other"
    kind = value.get("type")
    if kind == "response":
        return "response"
    if kind in COMMANDS:
        return "command"
    if kind in EVENTS:
        return "event"
    if "role" in value:
        return "message"
    if {"id", "api", "provider", "contextWindow"} <= value.keys():
        return "model"
    return "other"


EXAMPLES = _examples() if SPEC else []


def test_the_document_yields_many_examples() -> None:
    kinds = [_classify(v) for v in EXAMPLES]
    assert kinds.count("command") >= 50
    assert kinds.count("response") >= 40
    assert kinds.count("event") >= 18
    assert kinds.count("message") == 4
    assert kinds.count("model") == 1


def test_every_command_example_parses() -> None:
    seen = set()
    for value in EXAMPLES:
        if _classify(value) == "command":
            cmd = parse_command(value)
            assert cmd.to_wire() == value
            seen.add(value["type"])
    assert seen <= set(COMMANDS) and len(seen) >= 40  # parse_command refused any other


def test_every_response_and_event_example_validates() -> None:
    checked = 0
    for value in EXAMPLES:
        if _classify(value) in ("response", "event"):
            validate_output_line(value)
            validate_output_line(json.dumps(value))
            checked += 1
    assert checked >= 55


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


def test_message_and_model_examples_validate() -> None:
    messages = TypeAdapter(AgentMessage)
    for value in EXAMPLES:
        kind = _classify(value)
        if kind == "message":
            dumped = messages.validate_python(value).model_dump(by_alias=True, exclude_none=True)
            assert dumped == _drop_none(value)
        elif kind == "model":
            assert Model.model_validate(value).to_wire() == value
