"""The protocol's JSON encoder: one compact line per record, safe for any nesting depth.

Two engines give the same JSON values: a faster one (``atomic_host.kit._fast.json_encoder``,
orjson) once :func:`load_fast_encoder` has run — the RPC host calls it from its warm-up thread
after the first response, so startup never pays for the import, and never under
``ATOMIC_PLAIN=1`` — and the standard library's C encoder otherwise, or for what the fast one
refuses (nesting deeper than 254, integers beyond 64 bits, non-string keys, lone surrogates).
Either way U+2028, U+2029 and U+0085 never appear raw, so no client line splitter can cut a record
in two, and the output is strict JSON: a float that is NaN or infinite (a plugin's
``float("nan")``, a client's ``1e400``) is written ``null`` by both engines, as orjson and
JavaScript's ``JSON.stringify`` write it, never the ``NaN``/``Infinity`` that ``JSON.parse``,
serde and Go reject.
"""

from __future__ import annotations

import json
import re
from typing import Any

_fast: Any = None
"""The fast engine's ``encode(obj, default)`` once loaded (None: the standard encoder only)."""


def load_fast_encoder() -> bool:
    """Switch :func:`dumps` to the fast engine (True when it is on)."""
    global _fast
    from atomic_host.kit._fast.json_encoder import encode  # off the start path: the warm-up thread calls this

    _fast = encode
    return True


def fast_encoder_loaded() -> bool:
    """True once :func:`dumps` uses the fast engine (its text differs from the standard encoder's
    in escapes and number forms, never in value): caches of encoded text are kept per engine."""
    return _fast is not None


class RawJSON:
    """Compact protocol JSON already encoded (UTF-8 bytes in :attr:`data`), such as a long session's
    entry array or tree (``atomic_host.session.tree``): spliced verbatim by :func:`spliced_parts`
    and written by the stdout writer as it is, never decoded, copied or encoded again."""

    __slots__ = ("data", "masked")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.masked: tuple[object, bytes] | None = None
        """The stdout writer's memo: (the secret set it masked ``data`` with, the result)."""

    def __eq__(self, other: object) -> bool:
        return type(other) is RawJSON and other.data == self.data

    __hash__ = None  # type: ignore[assignment]  # compared by value, like the bytes it holds

    def __repr__(self) -> str:
        return f"RawJSON({len(self.data)} bytes)"


def dumps_spliced(obj: dict[str, Any]) -> str:
    """``dumps`` of a dict whose values may be :class:`RawJSON` (one level, e.g. a response's data)."""
    if not any(type(v) is RawJSON for v in obj.values()):
        return dumps(obj)
    return b"".join(spliced_parts(obj)).decode()


def spliced_parts(obj: dict[str, Any]) -> list[bytes]:
    """The UTF-8 pieces whose concatenation is :func:`dumps_spliced`: a raw value's bytes are one
    of them, never copied into an intermediate buffer (they are megabytes for a long session)."""
    parts: list[bytes] = []
    text = "{"
    for k, v in obj.items():
        text += ("" if text == "{" else ",") + dumps(str(k)) + ":"
        if type(v) is RawJSON:
            parts += (text.encode(), v.data)
            text = ""
        else:
            text += dumps(v)
    parts.append((text + "}").encode())
    return parts


def dumps(obj: Any) -> str:
    """One protocol record as compact JSON. ``ensure_ascii`` keeps U+2028/U+2029 escaped, so a
    naive client line splitter cannot break a record."""
    out = _fast_bytes(obj)
    return _standard(obj) if out is None else out.decode()


def dumpb(obj: Any) -> bytes:
    """:func:`dumps` as UTF-8 bytes (``dumps(obj).encode()``), without the text in between: what
    is written to a pipe or kept as :class:`RawJSON`."""
    out = _fast_bytes(obj)
    return _standard(obj).encode() if out is None else out


def _fast_bytes(obj: Any) -> bytes | None:
    """The fast engine's encoding; None before it is loaded or for what it refuses."""
    fast = _fast
    return None if fast is None else fast(obj, _default)


def _standard(obj: Any) -> str:
    try:
        return _text(obj, _encode)
    except ValueError as exc:
        if not str(exc).startswith(_NOT_FINITE):
            raise
    # A NaN or infinite float somewhere (rare): written as null, as orjson writes it.
    return _NON_FINITE.sub(_null_outside_strings, _text(obj, _encode_nan))


def _text(obj: Any, encode: Any) -> str:
    try:
        return encode(obj)
    except RecursionError:  # e.g. get_tree of a long linear session: thousands of levels deep
        return _dumps_deep(obj, encode)


_NOT_FINITE = "Out of range float values are not JSON compliant"
"""The start of the standard encoder's error for a NaN or infinite float (``allow_nan=False``)."""
_NON_FINITE = re.compile(r'"(?:[^"\\]+|\\.)*"|-?Infinity|NaN')
"""A JSON string (skipped whole: its text may contain the words) or a non-finite number's token."""


def _null_outside_strings(match: re.Match[str]) -> str:
    token = match[0]
    return token if token[0] == '"' else "null"


class _Raw(str):
    """Already-encoded JSON punctuation on the ``_dumps_deep`` work stack."""


def _dumps_deep(obj: Any, encode: Any = None) -> str:
    """``encode(obj)`` (default: the strict encoder's) without recursing per nesting level: shallow
    subtrees still go through the C encoder, only the deep spine is walked with an explicit stack."""
    encode = encode or _encode
    containers = (dict, list, tuple)
    height: dict[int, int] = {}
    pending: list[tuple[Any, bool]] = [(obj, False)]
    while pending:  # post-order: a container's height once its children's are known
        node, children_done = pending.pop()
        if not isinstance(node, containers):
            continue
        kids = list(node.values()) if isinstance(node, dict) else node
        if children_done:
            height[id(node)] = 1 + max((height.get(id(k), 0) for k in kids if isinstance(k, containers)), default=0)
        elif id(node) not in height:
            pending.append((node, True))
            pending.extend((k, False) for k in kids if isinstance(k, containers))
    parts: list[str] = []
    work: list[Any] = [obj]
    while work:
        item = work.pop()
        if type(item) is _Raw:
            parts.append(item)
        elif not isinstance(item, containers) or height.get(id(item), 0) < 200:
            parts.append(encode(item))
        elif isinstance(item, dict):
            pairs = list(item.items())
            work.append(_Raw("}"))
            for i in range(len(pairs) - 1, -1, -1):
                key, value = pairs[i]
                work.append(value)
                work.append(_Raw(("," if i else "{") + encode(key if isinstance(key, str) else str(key)) + ":"))
        else:
            work.append(_Raw("]"))
            for i in range(len(item) - 1, -1, -1):
                work.append(item[i])
                work.append(_Raw("," if i else "["))
    return "".join(parts)


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON (JSON has no NaN or Infinity)")


loads_strict = json.JSONDecoder(parse_constant=_not_json).decode
"""``json.loads`` of a text, strict: ``NaN``, ``Infinity`` and ``-Infinity`` (which Python's parser
accepts and JSON does not) raise ``ValueError``. A number too big for a double (``1e400``, valid
JSON) becomes infinity, as in JavaScript, and :func:`dumps` writes it back as ``null``, as
``JSON.stringify`` does."""


def _default(obj: Any) -> Any:
    dump = getattr(obj, "model_dump", None)
    if dump is not None:
        return dump(by_alias=True, exclude_none=True)
    to_wire = getattr(obj, "to_wire", None)
    if to_wire is not None:
        return to_wire()
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


_encode = json.JSONEncoder(separators=(",", ":"), default=_default, allow_nan=False).encode
"""One encoder for every record: ``json.dumps`` with arguments builds a new one per call."""
_encode_nan = json.JSONEncoder(separators=(",", ":"), default=_default).encode
"""The same, writing non-finite floats as ``NaN``/``Infinity`` (turned into null by :func:`_standard`)."""
