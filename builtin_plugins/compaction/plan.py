"""The planned rung (semantics §4.4–4.5): ask the model, shrink the view on overflow, build the text.

The host supplies ``request(context) -> assistant message``, which already handles transport
retries; this module only interprets answers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from atomic_host.kit.llm.errors import classify, is_context_overflow
from builtin_plugins.compaction.apply import Reconstruction, reconstruct
from builtin_plugins.compaction.parse import answer_text, parse_ranges, validate
from builtin_plugins.compaction.prepare import Preparation
from builtin_plugins.compaction.prompt import request_context

Request = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class PlanFailed(Exception):
    """The planned rung produced nothing usable; ``outcome`` names why (§4.5 outcomes)."""

    def __init__(self, outcome: str, message: str) -> None:
        super().__init__(message)
        self.outcome = outcome


@dataclass
class Plan:
    ranges: list[tuple[int, int]]
    outcome: str
    """``ranked``, or ``recovered`` for a length-truncated but usable answer."""


def _usage_in(message: dict[str, Any]) -> int:
    usage = message.get("usage") or {}
    return sum(int(usage.get(k) or 0) for k in ("input", "output", "cacheRead", "cacheWrite"))


def is_overflow_answer(message: dict[str, Any], context_window: int) -> bool:
    """An overflow error, or usage already beyond the context window (checked before parsing)."""
    if message.get("stopReason") == "error" and is_context_overflow(message, context_window):
        return True
    return context_window > 0 and _usage_in(message) > context_window


def _classify_failure(message: dict[str, Any]) -> PlanFailed:
    text = message.get("errorMessage") or "provider error"
    if message.get("stopReason") == "aborted":
        return PlanFailed("aborted", text)
    return PlanFailed("rateLimited" if classify(message) in ("rate_limit", "unavailable") else "providerError", text)


async def plan(
    prep: Preparation, ratio: float, query: str, context_window: int, request: Request
) -> Plan:
    """One planned compaction: deletion ranges over ``prep.lines`` (protected lines never deleted)."""
    total = len(prep.lines)
    offset = 0  # lines withheld from the head of the view (deleted deterministically)
    while True:
        view = prep.lines[offset:]
        view_protected = {n - offset for n in prep.protected if n > offset}
        context = request_context(view, view_protected, ratio, query, trimmed=offset > 0)
        answer = await request(context)
        if is_overflow_answer(answer, context_window):
            remaining = len(view) // 2
            if remaining < 1 or remaining >= len(view):
                raise PlanFailed("overflowed", "the transcript does not fit the model's context window")
            offset = total - remaining
            continue
        stop = answer.get("stopReason")
        if stop not in ("stop", "length"):
            raise _classify_failure(answer)
        parsed = parse_ranges(answer_text(answer), stop)
        if parsed is None:
            raise PlanFailed("unusable", "the model's answer was not a list of line ranges")
        rebased = [(a + offset, b + offset) for a, b in validate(parsed, len(view))]
        if offset:
            rebased.insert(0, (1, offset))
        ranges = validate(rebased, total, prep.protected)
        if not ranges:
            raise PlanFailed("unusable", "the model's answer deleted no lines")
        return Plan(ranges, "recovered" if stop == "length" else "ranked")


def fresh(prep: Preparation) -> Reconstruction:
    """The fresh rung: delete the whole region; protected lines survive."""
    return reconstruct(prep.lines, validate([(1, len(prep.lines))], len(prep.lines), prep.protected), prep.protected)
