"""Rebuilding the compacted text from deletion ranges, and its stats (semantics §4.4)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from atomic_host.kit.compaction import stats as kit_stats

_MARKER = re.compile(r"\(filtered (\d+) lines?\)")


@dataclass
class Reconstruction:
    text: str
    lines_deleted: int
    range_count: int


def marker(count: int) -> str:
    return f"(filtered {count} lines)"


def _marker_count(line: str) -> int | None:
    match = _MARKER.fullmatch(line)
    return int(match.group(1)) if match else None


def reconstruct(
    lines: list[str], ranges: list[tuple[int, int]], protected: set[int] | frozenset[int] = frozenset()
) -> Reconstruction:
    """Replace each maximal deleted run by one ``(filtered C lines)`` line; kept lines stay byte-for-byte.

    A prior marker touching a deleted line is deleted too (to a fixpoint) and its N counts in C.
    """
    total = len(lines)
    deleted = [False] * (total + 2)  # 1-based with sentinels
    for a, b in ranges:
        for n in range(a, b + 1):
            deleted[n] = True
    counts = {n: c for n, line in enumerate(lines, start=1) if (c := _marker_count(line)) is not None}
    changed = True
    while changed:
        changed = False
        for n in counts:
            if not deleted[n] and n not in protected and (deleted[n - 1] or deleted[n + 1]):
                deleted[n] = changed = True
    out: list[str] = []
    lines_deleted = runs = 0
    n = 1
    while n <= total:
        if not deleted[n]:
            out.append(lines[n - 1])
            n += 1
            continue
        start, c = n, 0
        while n <= total and deleted[n]:
            c += 1 + (counts[n] - 1 if n in counts else 0)
            n += 1
        lines_deleted += n - start
        runs += 1
        out.append(marker(c))
    return Reconstruction("\n".join(out), lines_deleted, runs)


def stats(lines_before: int, rec: Reconstruction, tokens_before: int, tail_tokens: int) -> dict[str, Any]:
    """The ``stats`` object of a reconstruction (``atomic_host.kit.compaction.stats``)."""
    return kit_stats(lines_before, rec.lines_deleted, rec.range_count, rec.text, tokens_before, tail_tokens)
