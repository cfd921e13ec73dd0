"""Usage dicts and their cost, priced per providers.md §1 (rates in USD per million tokens)."""

from __future__ import annotations

from typing import Any

Usage = dict[str, Any]

_COST_KEYS = ("input", "output", "cacheRead", "cacheWrite")


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
