"""Decoding the JSON of a stream event: orjson where its answer is the standard library's.

A streamed tool call of a megabyte is ~37,000 events, each a small JSON object the adapter decodes:
``json.loads`` took 2.6 µs of each (most of a parser's share), orjson 0.8 and the check below 0.7.
orjson is used only where it gives what ``json.loads`` gives. It reads integers beyond 64 bits as
floats, so a text with a run of 19 digits or more goes to the standard library; and what it
refuses that the standard library takes (NaN, Infinity, 1e400, lone surrogate escapes) goes there
too, so values and errors are ``json.loads``'s own.
"""

from __future__ import annotations

import json
import re
from typing import Any

_LONG_NUMBER = re.compile(r"[0-9][0-9]{18}")
"""A digit run orjson may read differently (2**63 has 19 digits; 18 always fit in 64 bits). Spelt
with a first digit of its own: the engine then skips to a digit before it tries a match (0.7 µs an
event instead of 1.2)."""

_fast: Any = None


def loads(text: str) -> Any:
    """``json.loads(text)`` (the same value, the same error), faster for an event's usual JSON."""
    fast = _fast or _load()
    if fast is not json.loads and not _LONG_NUMBER.search(text):
        try:
            return fast(text)
        except ValueError:  # orjson.JSONDecodeError; json says what is wrong, or takes it
            pass
    return json.loads(text)


def _load() -> Any:
    global _fast
    try:
        # optional: orjson when installed (stdlib json otherwise), looked up on first decode
        import orjson
    except ImportError:
        _fast = json.loads
    else:
        _fast = orjson.loads
    return _fast
