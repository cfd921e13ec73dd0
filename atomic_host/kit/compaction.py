"""For compaction strategies: the ``compaction.*`` settings normalised (semantics §4.1) and the
``stats`` object of a result (§4.4), so every strategy reports them the same way."""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "DEFAULT_PRESERVE_RECENT",
    "DEFAULT_QUERY",
    "DEFAULT_RATIO",
    "normalize_preserve_recent",
    "normalize_query",
    "normalize_ratio",
    "setting",
    "stats",
]

DEFAULT_RATIO = 0.5
DEFAULT_PRESERVE_RECENT = 2
DEFAULT_QUERY = "the latest user request"


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def normalize_ratio(value: Any) -> float:
    """A finite number strictly between 0 and 1, else 0.5."""
    return float(value) if _finite(value) and 0 < value < 1 else DEFAULT_RATIO


def normalize_preserve_recent(value: Any) -> int:
    """``max(0, floor(x))`` for a finite number, else 2."""
    return max(0, math.floor(value)) if _finite(value) else DEFAULT_PRESERVE_RECENT


def normalize_query(setting: Any, last_user_text: str | None) -> str:
    """The trimmed setting, else the last user-like message's text, else a fixed phrase (never truncated)."""
    if isinstance(setting, str) and setting.strip():
        return setting.strip()
    if last_user_text and last_user_text.strip():
        return last_user_text.strip()
    return DEFAULT_QUERY


def setting(settings: dict[str, Any], dotted: str) -> Any:
    """``settings["a"]["b"]`` for ``"a.b"`` over the merged settings dict (``api.settings``), or None."""
    node: Any = settings
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def wire_parameters(settings: dict[str, Any], last_user_text: str | None = None) -> dict[str, Any]:
    """The ``parameters`` object of a result (snake_case on the wire) from the merged settings."""
    return {
        "compression_ratio": normalize_ratio(setting(settings, "compaction.compression_ratio")),
        "preserve_recent": normalize_preserve_recent(setting(settings, "compaction.preserve_recent")),
        "query": normalize_query(setting(settings, "compaction.query"), last_user_text),
    }


def stats(
    lines_before: int, lines_deleted: int, range_count: int, text: str, tokens_before: int, tail_tokens: int
) -> dict[str, Any]:
    """The ``stats`` object: line counts, runs, tokens and the percent reduction (one decimal)."""
    after = math.ceil(len(text) / 4) + tail_tokens
    # JavaScript's Math.round(x * 10) / 10: halves round up, not to even.
    percent = math.floor(1000 * (1 - after / tokens_before) + 0.5) / 10 if tokens_before else 0
    return {
        "linesBefore": lines_before,
        "linesDeleted": lines_deleted,
        "linesKept": lines_before - lines_deleted,
        "rangeCount": range_count,
        "tokensBefore": tokens_before,
        "tokensAfter": after,
        "percentReduction": percent,
    }
