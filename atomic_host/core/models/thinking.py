"""Thinking levels: which a model supports, clamping and cycling (providers.md "Thinking levels").

``thinkingLevelMap`` per level: key missing = supported with the default value; a string = supported,
send this value; ``null`` = unsupported. ``xhigh`` and ``max`` are supported only when mapped to a string.
"""

from __future__ import annotations

from typing import Any

LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
DEFAULT_LEVEL = "medium"
_EXPLICIT_ONLY = frozenset({"xhigh", "max"})


def supported_levels(model: dict[str, Any]) -> list[str]:
    """The ordered levels ``model`` accepts; ``["off"]`` for a model without reasoning."""
    if not model.get("reasoning"):
        return ["off"]
    mapping = model.get("thinkingLevelMap") or {}
    out = []
    for level in LEVELS:
        if level in _EXPLICIT_ONLY:
            if isinstance(mapping.get(level), str):
                out.append(level)
        elif level not in mapping or mapping[level] is not None:
            out.append(level)
    return out


def clamp(model: dict[str, Any], level: str) -> str:
    """``level`` if supported, else the nearest supported level above, else below, else ``"off"``."""
    if level not in LEVELS:
        raise ValueError(f"Unknown thinking level: {level}")
    supported = supported_levels(model)
    if level in supported:
        return level
    rank = LEVELS.index(level)
    above = [x for x in supported if LEVELS.index(x) > rank]
    if above:
        return above[0]
    below = [x for x in supported if LEVELS.index(x) < rank]
    return below[-1] if below else "off"


def next_level(model: dict[str, Any], level: str) -> str | None:
    """The level after ``level`` in the model's cycle (wraps); None when the model does not reason."""
    if not model.get("reasoning"):
        return None
    levels = supported_levels(model)
    if not levels:
        return None
    index = levels.index(level) if level in levels else -1
    return levels[(index + 1) % len(levels)]


def map_value(model: dict[str, Any], level: str) -> str | None:
    """The provider value to send for ``level``: the map's string, else the level name itself."""
    value = (model.get("thinkingLevelMap") or {}).get(level)
    return value if isinstance(value, str) else level
