"""Error text from the JSON error objects the vendors send inside a stream.

The session's classifiers (``atomic_host.kit.llm.errors``) match substrings of ``errorMessage``, so
the error's ``type`` and ``code`` (``server_error``, ``context_length_exceeded``,
``insufficient_quota``…) must survive into it next to the human message.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["error_code", "error_message", "error_object_text"]


def _field(err: dict[str, Any], key: str) -> str:
    value = err.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)  # numeric codes ({"code": 502}) are codes too
    return value.strip() if isinstance(value, str) else ""


def error_object_text(err: Any) -> str:
    """``"<type> (<code>): <message>"`` for an error object (parts that are missing are left out).

    Anything that is not an object is shown as JSON, so nothing the server said is lost.
    """
    if not isinstance(err, dict):
        return err.strip() if isinstance(err, str) else json.dumps(err)
    kind, code, message = _field(err, "type"), _field(err, "code"), _field(err, "message")
    label = kind or code
    if kind and code and code != kind:
        label = f"{kind} ({code})"
    if label and message:
        return f"{label}: {message}"
    return label or message or json.dumps(err)


def error_code(err: Any) -> str:
    """The most specific name of an error object: its ``code``, else its ``type``, else ``"unknown"``."""
    if not isinstance(err, dict):
        return "unknown"
    return _field(err, "code") or _field(err, "type") or "unknown"


def error_message(err: Any, default: str) -> str:
    """An error object's ``message``, else ``default``."""
    return (_field(err, "message") if isinstance(err, dict) else "") or default
