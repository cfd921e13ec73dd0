"""orjson for a stream event's JSON where its answer is ``json.loads``'s: the agent-latency bar (issue 12).

A streamed tool call of a megabyte is ~37,000 events, each a small JSON object an adapter decodes
(figures: docs/performance.md). orjson is used only where it gives what ``json.loads`` gives. It
reads integers beyond 64 bits as floats, so a text with a run of 19 digits or more goes to the
standard library; and what it refuses that the standard library takes (NaN, Infinity, 1e400, lone
surrogate escapes) goes there too, so values and errors are ``json.loads``'s own.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

_LONG_NUMBER = re.compile(r"[0-9][0-9]{18}")
"""A digit run orjson may read differently (2**63 has 19 digits; 18 always fit in 64 bits). Spelt
with a first digit of its own: the engine then skips to a digit before it tries a match."""

_orjson_loads = orjson.loads


def loads(text: str) -> Any:
    """``json.loads(text)`` (the same value, the same error), faster for an event's usual JSON."""
    if not _LONG_NUMBER.search(text):
        try:
            return _orjson_loads(text)
        except ValueError:  # orjson.JSONDecodeError; json says what is wrong, or takes it
            pass
    return json.loads(text)
