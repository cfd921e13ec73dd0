"""Reading the planner's answer and validating its ranges (semantics §4.4)."""

from __future__ import annotations

import re
from typing import Any

_RECORD = re.compile(r"(0|[1-9][0-9]*),(0|[1-9][0-9]*)")


def answer_text(message: dict[str, Any]) -> str:
    """The concatenation of the answer's text blocks."""
    return "".join(b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text")


def parse_ranges(text: str, stop_reason: str = "stop") -> list[tuple[int, int]] | None:
    """Deletion records, or None when the answer is malformed/unusable.

    Normal stop: the last line may lack its newline and one trailing empty line is ignored.
    ``length`` stop: only newline-terminated lines count; the fragment after the last newline is dropped.
    Any bad (complete) line rejects the whole answer; empty text is malformed.
    """
    if not text:
        return None
    lines = text.split("\n")
    if stop_reason == "length":
        lines = lines[:-1]  # the fragment after the last "\n" (maybe empty) never counts
    elif lines[-1] == "":
        lines = lines[:-1]  # one trailing empty line
    if not lines:
        return None
    out = []
    for line in lines:
        match = _RECORD.fullmatch(line)
        if match is None:
            return None
        out.append((int(match.group(1)), int(match.group(2))))
    return out


def validate(
    ranges: list[tuple[int, int]], total: int, protected: set[int] | frozenset[int] = frozenset()
) -> list[tuple[int, int]]:
    """Swap reversed pairs, clamp to [1,total], drop empty, sort, merge overlapping or adjacent ranges,
    then split around protected lines. An empty result means the answer is unusable."""
    clamped = []
    for a, b in ranges:
        a, b = int(a), int(b)
        if a > b:
            a, b = b, a
        if b < 1 or a > total:
            continue  # entirely outside the transcript: empty after clamping
        a, b = max(1, a), min(total, b)
        if a <= b:
            clamped.append((a, b))
    clamped.sort()
    merged: list[tuple[int, int]] = []
    for a, b in clamped:
        if merged and a <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    split: list[tuple[int, int]] = []
    for a, b in merged:
        start = None
        for n in range(a, b + 1):
            if n in protected:
                if start is not None:
                    split.append((start, n - 1))
                    start = None
            elif start is None:
                start = n
        if start is not None:
            split.append((start, b))
    return split
