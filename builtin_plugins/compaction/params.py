"""Compaction parameters from settings (semantics §4.1)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

DEFAULT_RATIO = 0.5
DEFAULT_PRESERVE_RECENT = 2
DEFAULT_QUERY = "the latest user request"


@dataclass(frozen=True)
class Parameters:
    """The normalized knobs; ``to_wire`` is the snake_case ``parameters`` object."""

    compression_ratio: float = DEFAULT_RATIO
    preserve_recent: int = DEFAULT_PRESERVE_RECENT
    query: str = DEFAULT_QUERY

    def to_wire(self) -> dict[str, Any]:
        return {
            "compression_ratio": self.compression_ratio,
            "preserve_recent": self.preserve_recent,
            "query": self.query,
        }


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


def from_settings(get: Any, last_user_text: str | None) -> Parameters:
    """``get(dotted_key)`` reads a merged setting (``Settings.get``)."""
    return Parameters(
        compression_ratio=normalize_ratio(get("compaction.compression_ratio")),
        preserve_recent=normalize_preserve_recent(get("compaction.preserve_recent")),
        query=normalize_query(get("compaction.query"), last_user_text),
    )
