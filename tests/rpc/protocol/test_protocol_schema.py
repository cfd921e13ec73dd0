"""The JSON Schema document: complete, deterministic, and committed up to date."""

from __future__ import annotations

import json
import re
from pathlib import Path

from suite_paths import DOCS

from atomic_host.core.protocol.commands import COMMANDS
from atomic_host.core.protocol.events import EVENTS
from atomic_host.core.protocol.responses import RESPONSE_DATA
from atomic_host.core.protocol.schema import dumps_schema, protocol_schema, write_schema

SCHEMA_FILE = DOCS / "protocol.schema.json"


def test_schema_file_is_up_to_date() -> None:
    committed = SCHEMA_FILE.read_text(encoding="utf-8") if SCHEMA_FILE.exists() else ""
    assert committed == dumps_schema(), (
        "docs/protocol.schema.json is stale; regenerate it with: atomic schema > docs/protocol.schema.json"
        " (or: python -m atomic_host.core.protocol.schema > docs/protocol.schema.json)"
    )


def test_schema_is_deterministic_and_formatted(tmp_path: Path) -> None:
    first = dumps_schema()
    assert first == dumps_schema()
    assert first.endswith("}\n") and first.startswith('{\n  "$defs"')
    out = tmp_path / "s.json"
    write_schema(out)
    assert out.read_text(encoding="utf-8") == first


def test_schema_names_every_command_and_event() -> None:
    doc = protocol_schema()
    defs = doc["$defs"]
    for name in ("Command", "Response", "Event", "OutputRecord", "AgentMessage", "Model"):
        assert name in defs
    command_map = defs["Command"]["discriminator"]["mapping"]
    assert set(command_map) == set(COMMANDS)
    event_map = defs["Event"]["discriminator"]["mapping"]
    assert set(event_map) == set(EVENTS)
    assert set(doc["x-responseData"]) == set(RESPONSE_DATA) == set(COMMANDS)
    for ref in [*command_map.values(), *event_map.values()]:
        assert ref.removeprefix("#/$defs/") in defs


def test_wire_spelling_and_required_discriminators() -> None:
    defs = protocol_schema()["$defs"]
    prompt = defs["PromptCommand"]
    assert "streamingBehavior" in prompt["properties"]
    assert prompt["required"] == ["type", "message"]
    assert defs["UserMessage"]["required"][0] == "role"
    params = defs["CompactionParameters"]["properties"]
    assert {"compression_ratio", "preserve_recent", "query"} == set(params)


def test_every_ref_resolves() -> None:
    text = dumps_schema()
    defs = json.loads(text)["$defs"]
    for ref in set(re.findall(r'"\$ref": "#/\$defs/([^"]+)"', text)):
        assert ref in defs, ref
