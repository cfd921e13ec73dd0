"""Usage dicts and their cost, priced per providers.md §1 (rates in USD per million tokens)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

__all__ = ["Usage", "calculate_cost", "empty_usage"]

Usage = dict[str, Any]

_COST_KEYS = ("input", "output", "cacheRead", "cacheWrite")
MAX_COUNT = 2**53 - 1
"""The largest token count taken: JavaScript's largest exact integer (clients read usage as JSON
numbers); a count above it is no real count."""


def token_count(value: Any) -> tuple[int | None, bool]:
    """``value`` as a token count, and whether it was one: an int in 0..:data:`MAX_COUNT` (or a
    float of such an integral value) is itself; a negative number is 0, a fractional one its floor;
    anything else (not a finite number, too large, a bool, a string, an object) is None."""
    kind = type(value)
    if kind is int:
        if 0 <= value <= MAX_COUNT:
            return value, True
        return (0, False) if value < 0 else (None, False)
    if kind is float and math.isfinite(value):
        if value < 0:
            return 0, False
        if value <= MAX_COUNT:
            return int(value), value.is_integer()
    return None, False


class UsageFields:
    """A provider's usage object, read as token counts: :meth:`count` never raises, and calls
    ``note(field, value)`` for a value that is not a usable count (also for a usage object, or a
    nested one, that is not an object), so the adapter's arithmetic only ever sees ints."""

    __slots__ = ("note", "raw")

    def __init__(self, raw: Any, note: Callable[[str, Any], None]) -> None:
        self.note = note
        self.raw: dict[str, Any] = raw if type(raw) is dict else {}
        if raw is not None and type(raw) is not dict:
            note("usage", raw)

    def count(self, *path: str) -> int | None:
        """The count at ``path`` (keys of nested objects): an int >= 0, or None when absent or unusable."""
        value: Any = self.raw
        for depth, key in enumerate(path):
            if type(value) is not dict:
                if value is not None:
                    self.note(".".join(path[:depth]), value)
                return None
            value = value.get(key)
        if value is None:
            return None
        count, fine = token_count(value)
        if not fine:
            self.note(".".join(path), value)
        return count


def empty_usage() -> Usage:
    """A zero usage dict with a zero cost."""
    return {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0, "total": 0.0},
    }


def _rates(model_cost: dict[str, Any], usage: Usage) -> dict[str, float]:
    prompt = usage.get("input", 0) + usage.get("cacheRead", 0) + usage.get("cacheWrite", 0)
    chosen: dict[str, Any] = model_cost
    best = -1.0
    for tier in model_cost.get("tiers") or []:
        above = tier.get("inputTokensAbove", 0)
        if prompt > above and above > best:
            chosen, best = tier, above
    return {k: float(chosen.get(k) or 0) for k in _COST_KEYS}


def calculate_cost(model: dict[str, Any], usage: Usage, multiplier: float = 1.0) -> dict[str, float]:
    """Compute ``usage["cost"]`` in place from ``model["cost"]`` (tiers, 1h cache writes) and return it."""
    rate = _rates(model.get("cost") or {}, usage)
    write_1h = usage.get("cacheWrite1h") or 0
    cost = {
        "input": rate["input"] * usage.get("input", 0) / 1e6,
        "output": rate["output"] * usage.get("output", 0) / 1e6,
        "cacheRead": rate["cacheRead"] * usage.get("cacheRead", 0) / 1e6,
        # 1-hour cache writes are billed at twice the input rate.
        "cacheWrite": (
            rate["cacheWrite"] * (usage.get("cacheWrite", 0) - write_1h) + 2 * rate["input"] * write_1h
        )
        / 1e6,
    }
    if multiplier != 1.0:
        cost = {k: v * multiplier for k, v in cost.items()}
    cost["total"] = sum(cost.values())
    usage["cost"] = cost
    return cost
