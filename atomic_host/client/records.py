"""What the client keeps of the host's output: a bounded log of records, and a JSON parser for
records nested deeper than the recursion limit."""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

DEEP_STACK_BYTES = 512 * 1024 * 1024
"""Stack of the thread that parses a deeply nested line (address space, committed only as used)."""


def loads_deep(line: str) -> Any:
    """``json.loads`` for records nested deeper than the recursion limit, such as the ``get_tree``
    of a 20,000-turn session.

    The C scanner recurses once per level: a raised recursion limit lets it go deeper, and a thread
    with a big stack gives it the room (on the main thread's 8 MB it crashed the process at ~40,000
    levels)."""
    try:
        return json.loads(line)
    except RecursionError:
        pass
    outcome: list[Any] = []

    def parse() -> None:
        try:
            outcome.append((True, json.loads(line)))
        except BaseException as exc:  # handed to the caller's thread
            outcome.append((False, exc))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * line.count("{") + 4 * line.count("[") + 1000))
    previous = threading.stack_size(DEEP_STACK_BYTES)
    try:
        worker = threading.Thread(target=parse, name="atomic-deep-json")
        worker.start()
    finally:
        threading.stack_size(previous)
    try:
        worker.join()
    finally:
        sys.setrecursionlimit(limit)
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


class EventLog:
    """The records a client keeps: append-only, indexed by arrival number, holding at most the
    newest ``limit`` (a long session's millions of deltas must not grow memory without bound).

    ``len()`` counts every record ever received, so ``start = len(log)`` ... ``log[start:]`` keeps
    working as a cursor however many were dropped; indexing a dropped record raises IndexError,
    and a slice gives the retained part of its range.
    """

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self._items: list[Any] = []
        self._dropped = 0  # records discarded from the front

    def append(self, item: Any) -> None:
        self._items.append(item)
        if self.limit is not None and len(self._items) > self.limit + self.limit // 4:
            cut = len(self._items) - self.limit  # drop in batches: amortised O(1) per append
            del self._items[:cut]
            self._dropped += cut

    def __len__(self) -> int:
        return self._dropped + len(self._items)

    def clear(self) -> None:
        """Drop every retained record (the count, and so every cursor, stays)."""
        self._dropped += len(self._items)
        self._items.clear()

    def __delitem__(self, key: slice) -> None:
        if key != slice(None):
            raise TypeError("only `del log[:]` (clear) is supported")
        self.clear()

    def index(self, item: Any) -> int:
        """The arrival number of a retained record (identity or equality, like list.index)."""
        return self._dropped + self._items.index(item)

    def __iter__(self) -> Any:
        return iter(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def __getitem__(self, key: int | slice) -> Any:
        total = len(self)
        if isinstance(key, slice):
            start, stop, step = key.indices(total)
            start, stop = max(start - self._dropped, 0), max(stop - self._dropped, 0)
            return self._items[start:stop:step]
        index = key + total if key < 0 else key
        if not self._dropped <= index < total:
            raise IndexError(f"record {key} is not retained (dropped {self._dropped} of {total})")
        return self._items[index - self._dropped]

    def __eq__(self, other: object) -> bool:
        return list(self._items) == other if isinstance(other, list) else NotImplemented

    def __repr__(self) -> str:
        return f"EventLog({len(self)} records, {len(self._items)} retained)"
