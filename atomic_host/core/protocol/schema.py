"""One JSON Schema document for the whole protocol (``atomic schema`` prints it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from atomic_host.core.protocol.commands import Command
from atomic_host.core.protocol.events import Event, OutputRecord
from atomic_host.core.protocol.messages import AgentMessage
from atomic_host.core.protocol.model import Model
from atomic_host.core.protocol.responses import RESPONSE_DATA, Response

SCHEMA_ID = "https://atomic-host.dev/protocol.schema.json"


def protocol_schema() -> dict[str, Any]:
    """The protocol as JSON Schema.

    ``$defs`` holds Command, Response, Event, OutputRecord, AgentMessage and Model plus everything
    they reference; ``x-responseData`` maps each command to the schema of its success ``data``.
    """
    roots: dict[str, Any] = {
        "Command": Command,
        "Response": Response,
        "Event": Event,
        "OutputRecord": OutputRecord,
        "AgentMessage": AgentMessage,
        "Model": Model,
    }
    defs: dict[str, Any] = {}
    for name, tp in roots.items():
        schema = TypeAdapter(tp).json_schema(by_alias=True, ref_template="#/$defs/{model}")
        for def_name, def_schema in schema.pop("$defs", {}).items():
            _merge(defs, def_name, def_schema)
        _merge(defs, name, schema)
    response_data: dict[str, Any] = {}
    for command, spec in sorted(RESPONSE_DATA.items()):
        if spec.model is None:
            response_data[command] = {} if spec.any_data else False
            continue
        schema = spec.model.model_json_schema(by_alias=True, ref_template="#/$defs/{model}")
        for def_name, def_schema in schema.pop("$defs", {}).items():
            _merge(defs, def_name, def_schema)
        _merge(defs, spec.model.__name__, schema)
        ref: dict[str, Any] = {"$ref": f"#/$defs/{spec.model.__name__}"}
        response_data[command] = {"anyOf": [ref, {"type": "null"}]} if spec.nullable else ref
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "Atomic RPC protocol",
        "description": "JSON lines: clients send Command records; the host prints OutputRecord records.",
        "$defs": defs,
        "anyOf": [{"$ref": "#/$defs/Command"}, {"$ref": "#/$defs/OutputRecord"}],
        # Per command: the schema of a success response's ``data``; false = always absent.
        "x-responseData": response_data,
    }


def _merge(defs: dict[str, Any], name: str, schema: dict[str, Any]) -> None:
    old = defs.get(name)
    if old is not None and old != schema:
        raise ValueError(f"two different schemas are named {name!r}")
    defs[name] = schema


def dumps_schema() -> str:
    """Deterministic text: sorted keys, 2-space indent, trailing newline."""
    return json.dumps(protocol_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_schema(path: str | Path) -> None:
    """Write the schema document to ``path``."""
    Path(path).write_text(dumps_schema(), encoding="utf-8")


if __name__ == "__main__":
    import sys

    sys.stdout.write(dumps_schema())
