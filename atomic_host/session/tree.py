"""The session tree and entry list on the wire: ``get_tree``'s and ``get_entries``'s JSON, built from
each entry's JSON encoded once per session (a session view), without recursion.

The :class:`Session` type itself is public, in :mod:`atomic_host.kit.sessions.tree` (stores are
plugins and build sessions).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from atomic_host.core.jsonfast import RawJSON, dumpb, fast_encoder_loaded
from atomic_host.kit.collector import gc_paused
from atomic_host.kit.sessions.ids import ms_from_iso
from atomic_host.kit.sessions.tree import Session


class EncodedEntries:
    """Every entry's protocol JSON (``dumpb(entry)``) in append order, as one array of UTF-8 bytes,
    as a session view (``Session.view``): a long session's entries are encoded once, not on every
    read, and ``get_entries`` answers with the same :class:`RawJSON` (whose bytes the stdout writer
    writes as they are) until something is appended. It also keeps the last tree it was used for,
    keyed by the entry count (entries never change once appended, and labels are entries too, so
    the count says which tree it is)."""

    def __init__(self) -> None:
        self._text = RawJSON(b"[]")
        self._pending = bytearray()
        """The entries added since the last :meth:`array`, comma-separated: each encoder result is
        copied in and dropped at once (orjson's own buffers, kept one per entry, took 6 KB each)."""
        self._ends: list[int] = []
        """Where each entry's text ends in the array text (the comma or the closing bracket)."""
        self._size = 1
        self._lock = threading.Lock()
        self.tree: tuple[int, RawJSON] | None = None

    def add(self, entry: dict[str, Any]) -> None:
        piece = dumpb(entry)
        with self._lock:
            start = self._size + 1 if self._ends else 1
            if self._pending:
                self._pending += b","
            self._pending += piece
            self._ends.append(start + len(piece))
            self._size = start + len(piece)

    def array(self) -> RawJSON:
        """``[e0,e1,…]``: the JSON array of the entries taken so far."""
        with self._lock:
            if self._pending:
                old = self._text.data
                # the old array is copied once, into the new one (a memoryview slice is no copy)
                head = (memoryview(old)[:-1], b",") if len(old) > 2 else (b"[",)
                self._text = RawJSON(b"".join((*head, self._pending, b"]")))
                self._pending = bytearray()
            return self._text

    def pieces(self, count: int) -> list[memoryview]:
        """The JSON of the first ``count`` entries: views into the array, no copies."""
        text, ends = memoryview(self.array().data), self._ends
        out, start = [], 1
        for i in range(count):
            end = ends[i]
            out.append(text[start:end])
            start = end + 1
        return out


class _StandardEncoded(EncodedEntries):
    """Pieces made before orjson was loaded (the first responses of a host): kept apart, so a
    response never mixes the two encoders' text."""


def encoded_entries(session: Session, upto: list[dict[str, Any]] | None = None) -> EncodedEntries:
    """The session's :class:`EncodedEntries`, caught up with its entries (or with ``upto``)."""
    return session.view(EncodedEntries if fast_encoder_loaded() else _StandardEncoded, upto)


def entries_lag(session: Session) -> int:
    """Entries the session's :class:`EncodedEntries` has yet to encode."""
    return session.view_lag(EncodedEntries if fast_encoder_loaded() else _StandardEncoded)


def entries_json(session: Session) -> RawJSON:
    """``dumps(session.entries)``: the same value, encoded once per entry (see :class:`EncodedEntries`)."""
    return encoded_entries(session).array()


def tree_json(session: Session) -> RawJSON:
    """``dumps(session.tree())``, the same value (see :func:`tree_json_snapshot`)."""
    return tree_json_snapshot(session)()


def tree_json_snapshot(session: Session) -> Callable[[], RawJSON]:
    """A function that encodes the tree as it is now, safe to run in a thread while the session
    goes on (it holds copies of the entry list and labels; entries are never changed once
    appended). Unchanged since the last call: the same text again, at once."""
    entries, labels = list(session.entries), session.labels_with_timestamps()
    count = len(entries)

    def encode() -> RawJSON:
        view = encoded_entries(session, entries)
        cached = view.tree
        if cached is not None and cached[0] == count:
            return cached[1]
        with gc_paused():
            text = encode_tree_pieces(entries, view.pieces(count), labels)
        view.tree = (count, text)
        return text

    return encode


def cached_tree(session: Session) -> RawJSON | None:
    """The tree text of the session as it is now, when the last ``get_tree`` left it (else None):
    no copy, no thread."""
    view = session.current_view(EncodedEntries if fast_encoder_loaded() else _StandardEncoded)
    cached = view.tree if view is not None else None
    return cached[1] if cached is not None and cached[0] == len(session.entries) else None


def encode_tree_pieces(
    entries: list[dict[str, Any]], pieces: list[memoryview], labels: dict[str, tuple[str, str]]
) -> RawJSON:
    """``dumps(build_tree(entries, labels))``, the same value, from each entry's encoded JSON
    (``pieces[i]`` is entry ``i``'s): nodes ``{entry, children, label?, labelTimestamp?}``, roots the
    entries whose parent is null, themselves or unknown, children sorted by timestamp (stable).
    Positions stand for nodes, so no node dict is built, and the walk is iterative: a linear
    session's tree is as deep as it is long."""
    position: dict[str, int] = {}
    for i, entry in enumerate(entries):  # a repeated id: the last entry with it is the parent
        entry_id = entry.get("id")
        if isinstance(entry_id, str):
            position[entry_id] = i
    kids: list[list[int] | None] = [None] * len(entries)
    roots: list[int] = []
    for i, entry in enumerate(entries):
        parent_id = entry.get("parentId")
        parent = position.get(parent_id) if isinstance(parent_id, str) and parent_id != entry.get("id") else None
        if parent is None:
            roots.append(i)
        else:
            siblings = kids[parent]
            if siblings is None:
                kids[parent] = [i]
            else:
                siblings.append(i)
    for siblings in kids:
        if siblings is not None and len(siblings) > 1:
            siblings.sort(key=lambda j: ms_from_iso(entries[j].get("timestamp")) or 0.0)
    parts: list[bytes | memoryview] = [b"["]
    stack: list[Any] = [b"]"]
    for j in range(len(roots) - 1, -1, -1):
        stack.append(roots[j])
        if j:
            stack.append(b",")
    while stack:
        item = stack.pop()
        if type(item) is bytes:
            parts.append(item)
            continue
        parts.append(b'{"entry":')
        parts.append(pieces[item])
        parts.append(b',"children":[')
        label = labels.get(entries[item].get("id", ""))
        if label:
            stack.append(b'],"label":' + dumpb(label[0]) + b',"labelTimestamp":' + dumpb(label[1]) + b"}")
        else:
            stack.append(b"]}")
        children = kids[item]
        if children is not None:
            for j in range(len(children) - 1, -1, -1):
                stack.append(children[j])
                if j:
                    stack.append(b",")
    return RawJSON(b"".join(parts))


__all__ = [
    "EncodedEntries",
    "cached_tree",
    "encode_tree_pieces",
    "encoded_entries",
    "entries_json",
    "entries_lag",
    "tree_json",
    "tree_json_snapshot",
]
