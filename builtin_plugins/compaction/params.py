"""Compaction parameters from settings (semantics §4.1); the normalisation is the kit's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from atomic_host.kit.compaction import (
    DEFAULT_PRESERVE_RECENT,
    DEFAULT_QUERY,
    DEFAULT_RATIO,
    normalize_preserve_recent,
    normalize_query,
    normalize_ratio,
)

__all__ = ["Parameters", "from_settings", "normalize_preserve_recent", "normalize_query", "normalize_ratio"]


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


def from_settings(get: Any, last_user_text: str | None) -> Parameters:
    """``get(dotted_key)`` reads a merged setting (``Settings.get``)."""
    return Parameters(
        compression_ratio=normalize_ratio(get("compaction.compression_ratio")),
        preserve_recent=normalize_preserve_recent(get("compaction.preserve_recent")),
        query=normalize_query(get("compaction.query"), last_user_text),
    )
