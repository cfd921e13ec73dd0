"""Lenient JSON parsing for streamed tool-call arguments (a port of pi-ai's ``parseStreamingJson``)."""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = ["parse_arguments", "parse_streaming_json"]

_VALID_ESCAPES = frozenset('"\\/bfnrtu')
_CONTROL = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


# A JSON string from its opening quote to its closing quote (or the end of the text, for a string
# still being streamed): any character but a quote or a backslash, or a backslash and the next char.
_STRING = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)', re.DOTALL)
_ESCAPE = re.compile(r"\\(.|\Z)", re.DOTALL)  # a backslash and what follows it (pairs, left to right)
_CONTROL_CHARS = re.compile(r"[\x00-\x1f]")


def _control_escape(match: re.Match[str]) -> str:
    ch = match.group()
    return _CONTROL.get(ch) or f"\\u{ord(ch):04x}"


def _escape(match: re.Match[str]) -> str:
    nxt = match.group(1)
    if nxt == "" or nxt in _VALID_ESCAPES:  # valid, or a trailing backslash the next fragment completes
        return match.group()
    return "\\\\" + nxt  # an invalid escape: keep the backslash literally, as the model meant it


def _repair_string(match: re.Match[str]) -> str:
    text = match.group()
    if "\\" in text:
        text = _ESCAPE.sub(_escape, text)
    return _CONTROL_CHARS.sub(_control_escape, text)


def repair_json_strings(text: str) -> str:
    """Escape raw control characters inside strings and double backslashes before invalid escapes.

    A trailing backslash at the end of the text is kept: the next fragment completes it. Runs in C
    (one regex pass over the strings), so repairing a streamed megabyte costs milliseconds.
    """
    return _STRING.sub(_repair_string, text)


def _partial(text: str) -> Any:
    # lazy: jiter (a Rust extension) only for a partial JSON text (tool arguments mid-stream)
    import jiter

    return jiter.from_json(text.encode(), partial_mode="trailing-strings", allow_inf_nan=False)


def _finite(value: Any) -> Any:
    """``value`` with every infinite float (a number too large for one, which the partial parse
    reads as infinity) replaced by None: the arguments are kept in the session and sent again,
    and JSON cannot carry infinity."""
    if type(value) is float:
        return value if math.isfinite(value) else None
    if type(value) is dict:
        return {k: _finite(v) for k, v in value.items()}
    if type(value) is list:
        return [_finite(v) for v in value]
    return value


_NOT_JSON = object()


def _number(text: str) -> float | str:
    """A JSON number with a fraction or exponent: its float, or its text when no float holds it
    (``1e400``): an infinite float would make every later request of the session fail to encode."""
    value = float(text)
    return value if math.isfinite(value) else text


def _not_a_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _loads(text: str) -> Any:
    """``text`` as complete JSON (strict: ``NaN``/``Infinity`` are not JSON), or ``_NOT_JSON``."""
    try:
        return json.loads(text, parse_float=_number, parse_constant=_not_a_constant)
    except (ValueError, RecursionError):  # nesting deeper than the interpreter's recursion limit
        return _NOT_JSON


def _partial_dict(text: str) -> dict[str, Any] | None:
    """``text`` as partial JSON: its dict, None when it is no (partial) JSON object."""
    try:
        value = _partial(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def parse_arguments(text: str | None) -> tuple[dict[str, Any], bool]:
    """A tool call's final arguments: ``(the object, complete)``; never raises.

    The object is the most that can be read (``{}`` when nothing usable), always strict JSON (a
    number no float holds is kept as its text when complete, None in a partial reading);
    ``complete`` says whether it is the whole text as a JSON object, the only arguments a call may
    run with: True for no text; False for a text cut short (the object is then a partial parse,
    for display only) or a JSON value that is not an object."""
    value, complete = _parse(text)
    return (value, True) if complete else (_finite(value), False)


def _parse(text: str | None) -> tuple[dict[str, Any], bool]:
    """:func:`parse_arguments` without making a partial reading strict JSON (what the streaming
    view shows, re-parsed as the call grows).

    In order: the text as JSON (a finished call), the text as partial JSON, and only when neither
    parses, the text with its strings repaired (raw control characters, invalid escapes), whole and
    then partial. A streamed argument is valid JSON cut short, so the partial parse answers it in one
    pass in C; the repair calls back into Python for every escape of every string (a megabyte of
    source code is ~200,000 escapes: most of what a big ``write`` call cost the host). The repair
    cannot change what the partial parse accepted (it refuses what the repair touches), so a text
    the partial parse reads is never complete once repaired: it is cut short."""
    if not text or not text.strip():
        return {}, True
    value = _loads(text)
    if value is _NOT_JSON:
        partial = _partial_dict(text)
        if partial is not None:
            return partial, False
        repaired = repair_json_strings(text)
        if repaired == text:
            return {}, False
        value = _loads(repaired)
        if value is _NOT_JSON:
            return _partial_dict(repaired) or {}, False
    return (value, True) if isinstance(value, dict) else ({}, False)


def parse_streaming_json(text: str | None) -> dict[str, Any]:
    """Parse possibly incomplete JSON into a dict; never raises (``{}`` when nothing usable): the
    object :func:`parse_arguments` reads, for the view of a call still streaming."""
    return _parse(text)[0]
