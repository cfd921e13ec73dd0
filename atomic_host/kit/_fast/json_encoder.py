"""orjson for the protocol's records, the same JSON values as the standard encoder: big responses (session-scale bar).

``get_messages`` of a long session and the other read commands encode megabytes per response;
orjson does it about ten times faster than the standard library's C encoder (figures:
docs/performance.md). What orjson refuses (nesting deeper than 254, integers beyond 64 bits,
non-string keys, lone surrogates) is left to the standard encoder (``core/jsonfast.py``), and the
line breaks JavaScript and naive line splitters treat as ends of lines are escaped as the standard
encoder escapes them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson


def encode(obj: Any, default: Callable[[Any], Any]) -> bytes | None:
    """orjson's encoding of ``obj`` with U+2028, U+2029 and U+0085 escaped; None for what it refuses."""
    try:
        out = orjson.dumps(obj, default=default)
    except TypeError:  # orjson.JSONEncodeError: too deep, a huge int, a non-str key, a surrogate
        return None
    # ``isascii`` first (word-at-a-time): the two substring scans cost ten times more on a big
    # response, and most responses are all ASCII
    if not out.isascii() and (b"\xe2\x80" in out or b"\xc2\x85" in out):
        out = out.replace(b"\xe2\x80\xa8", b"\\u2028").replace(b"\xe2\x80\xa9", b"\\u2029")
        out = out.replace(b"\xc2\x85", b"\\u0085")
    return out
