"""The session tree on the wire: ``get_tree``'s JSON, encoded without recursion.

The :class:`Session` type itself is public, in :mod:`atomic_host.kit.sessions.tree` (stores are
plugins and build sessions).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from atomic_host.core.jsonfast import RawJSON, dumps
from atomic_host.kit.sessions.tree import Session, gc_paused


def tree_json(session: Session) -> RawJSON:
    """``dumps(session.tree())``, the same text (see :func:`encode_tree`)."""
    return tree_json_snapshot(session)()


def tree_json_snapshot(session: Session) -> Callable[[], RawJSON]:
    """A function that encodes the tree as it is now, safe to run in a thread while the session
    goes on (see ``Session.tree_snapshot``). ``get_tree`` of a 20,000-turn session takes about a
    second."""
    build = session.tree_snapshot()

    def encode() -> RawJSON:
        roots = build()
        with gc_paused():
            return encode_tree(roots)

    return encode


def encode_tree(roots: list[dict[str, Any]]) -> RawJSON:
    """``dumps(roots)``, the same text, built without recursion: the tree of a linear session is
    as deep as it is long, so the generic encoder falls back to a slow walk over every container
    (215 ms at 4,000 entries); here only the nodes are walked and each entry is encoded whole by
    the C encoder."""
    parts = ["["]
    stack: list[Any] = ["]"]
    for i in range(len(roots) - 1, -1, -1):
        stack.append(roots[i])
        if i:
            stack.append(",")
    while stack:
        item = stack.pop()
        if type(item) is str:
            parts.append(item)
            continue
        parts.append('{"entry":' + dumps(item["entry"]) + ',"children":[')
        tail = "]"
        if "label" in item:
            tail += ',"label":' + dumps(item["label"]) + ',"labelTimestamp":' + dumps(item["labelTimestamp"])
        stack.append(tail + "}")
        children = item["children"]
        for i in range(len(children) - 1, -1, -1):
            stack.append(children[i])
            if i:
                stack.append(",")
    return RawJSON("".join(parts))


__all__ = ["encode_tree", "tree_json", "tree_json_snapshot"]
