"""Turn one parsed input line into a typed command, or a short, stable error message."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from atomic_host.core.protocol.commands import COMMANDS, CommandBase
from atomic_host.core.protocol.declarations import DECLARATIONS

_EXPECTED = {
    "string_type": "string",
    "bool_type": "boolean",
    "int_type": "integer",
    "int_from_float": "integer",
    "float_type": "number",
    "list_type": "array",
    "dict_type": "object",
    "model_type": "object",
    "model_attributes_type": "object",
    "none_required": "null",
}

# Commands whose only fields are ``type`` and ``id``: no validator needed (get_state is hot).
_BARE = frozenset(name for name, decl in DECLARATIONS.items() if decl.bare)
_TEXT = frozenset({"prompt", "steer", "follow_up"})
"""Commands a client mostly sends as just ``type``, ``id`` and a ``message`` string: such a one is
valid as it is (its other fields are optional), so it is built without the validator (~20 µs of
a prompt's path to its model request, issue 12)."""
_TEXT_KEYS = frozenset({"type", "id", "message"})
_SCALARS = (str, int, float, bool)


class CommandError(ValueError):
    """A command was rejected before its handler ran.

    ``message`` is the text for the error response; ``command`` is the value for its ``command``
    key (the request's ``type``, or ``"unknown"`` when there is no usable type).
    """

    def __init__(self, message: str, command: str = "unknown") -> None:
        super().__init__(message)
        self.message = message
        self.command = command


def parse_command(obj: Any) -> BaseModel:
    """Validate a decoded JSON value as a command; raise ``CommandError`` naming the problem."""
    if not isinstance(obj, dict):
        raise CommandError(f"Invalid command: expected a JSON object, got {_json_kind(obj)}")
    kind = obj.get("type")
    if kind is None:
        raise CommandError("Unknown command: undefined")
    if not isinstance(kind, str):
        raise CommandError(f"Unknown command: {kind}")
    cls = COMMANDS.get(kind)
    if cls is None:
        raise CommandError(f"Unknown command: {kind}", kind)
    if kind in _BARE:
        request_id = obj.get("id")
        if request_id is None or isinstance(request_id, str | int | float | bool):
            return cls.model_construct(**obj)
    elif kind in _TEXT and type(obj.get("message")) is str and _TEXT_KEYS.issuperset(obj):
        request_id = obj.get("id")
        if request_id is None or type(request_id) in _SCALARS:
            return cls.model_construct(**obj)
    try:
        return cls.model_validate(obj)
    except ValidationError as exc:
        raise CommandError(describe_error(exc), kind) from None


def describe_error(exc: ValidationError) -> str:
    """One short message for the first problem, naming the field in wire spelling."""
    err = exc.errors(include_url=False)[0]
    where = _wire_path(err["loc"])
    etype = err["type"]
    if etype == "missing":
        return f"Missing required field: {where}"
    if etype == "value_error":
        cause = str(err.get("ctx", {}).get("error", err["msg"]))
        return f"Invalid field {where}: {cause}" if where else cause
    if etype == "literal_error":
        return f"Invalid field {where}: expected {err['ctx']['expected']}"
    if etype == "union_tag_invalid":
        return f"Invalid field {where}: unknown type {err['input'].get('type')!r}"
    if etype == "union_tag_not_found":
        return f"Missing required field: {where}.{err['ctx']['discriminator'].strip(chr(39))}"
    expected = _EXPECTED.get(etype)
    if expected:
        return f"Invalid field {where}: expected {expected}"
    return f"Invalid field {where}: {err['msg']}" if where else err["msg"]


def _wire_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "null" if value is None else type(value).__name__


__all__ = ["CommandBase", "CommandError", "describe_error", "parse_command"]
