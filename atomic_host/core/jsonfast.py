"""The protocol's JSON encoder: one compact line per record, safe for any nesting depth."""

from __future__ import annotations

import json
from typing import Any


def dumps(obj: Any) -> str:
    """One protocol record as compact JSON. ``ensure_ascii`` keeps U+2028/U+2029 escaped, so a
    naive client line splitter cannot break a record."""
    try:
        return json.dumps(obj, separators=(",", ":"), default=_default)
    except RecursionError:  # e.g. get_tree of a long linear session: thousands of levels deep
        return _dumps_deep(obj)


class _Raw(str):
    """Already-encoded JSON punctuation on the ``_dumps_deep`` work stack."""


def _dumps_deep(obj: Any) -> str:
    """Same output as ``dumps`` without recursing per nesting level: shallow subtrees still go
    through the C encoder, only the deep spine is walked with an explicit stack."""
    encode = json.JSONEncoder(separators=(",", ":"), default=_default).encode
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


def _default(obj: Any) -> Any:
    dump = getattr(obj, "model_dump", None)
    if dump is not None:
        return dump(by_alias=True, exclude_none=True)
    to_wire = getattr(obj, "to_wire", None)
    if to_wire is not None:
        return to_wire()
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")
