"""Lenient JSON parsing for streamed tool-call arguments (a port of pi-ai's ``parseStreamingJson``)."""

from __future__ import annotations

import json
from typing import Any

_VALID_ESCAPES = frozenset('"\\/bfnrtu')
_CONTROL = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def repair_json_strings(text: str) -> str:
    """Escape raw control characters inside strings and double backslashes before invalid escapes."""
    out: list[str] = []
    in_string = False
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if not in_string:
            out.append(ch)
            in_string = ch == '"'
        elif ch == '"':
            out.append(ch)
            in_string = False
        elif ch == "\\":
            nxt = text[i + 1] if i + 1 < n else ""
            if nxt == "":
                out.append(ch)  # a trailing backslash: the next fragment completes it
            elif nxt in _VALID_ESCAPES:
                out.append(ch + nxt)
                i += 1
            else:
                out.append("\\\\")  # keep the backslash literally, as the model meant it
        elif ch < " ":
            out.append(_CONTROL.get(ch) or f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _partial(text: str) -> Any:
    import jiter

    return jiter.from_json(text.encode(), partial_mode="trailing-strings")


def parse_streaming_json(text: str | None) -> dict[str, Any]:
    """Parse possibly incomplete JSON into a dict; never raises (``{}`` when nothing usable)."""
    if not text or not text.strip():
        return {}
    try:
        value = json.loads(text)
        return value if isinstance(value, dict) else {}
    except ValueError:
        pass
    repaired = repair_json_strings(text)
    if repaired != text:
        try:
            value = json.loads(repaired)
            return value if isinstance(value, dict) else {}
        except ValueError:
            pass
    for candidate in (text, repaired) if repaired != text else (text,):
        try:
            value = _partial(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return {}
