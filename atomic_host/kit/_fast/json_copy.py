"""A deep copy specialised for dicts, lists and scalars: model lookups and catalog loads (the startup bar).

``copy.deepcopy`` spends most of its time on its memo and dispatch machinery; for dicts, lists and
scalars a direct recursion gives the same result several times faster (docs/performance.md).
Anything else (a tuple, a plugin's own object) still goes through ``copy.deepcopy``, so the result
equals ``copy.deepcopy``'s for every value; the one difference is that a container referenced twice
inside ``value`` is copied twice instead of once (JSON data never shares containers).
"""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")

_SCALARS = frozenset({str, int, float, bool, type(None)})


def json_copy(value: T) -> T:
    """A deep copy of ``value``: new dicts and lists all the way down, scalars shared (they are
    immutable), other objects ``copy.deepcopy``'d."""
    kind = type(value)
    if kind is dict:
        return {k: v if type(v) in _SCALARS else json_copy(v) for k, v in value.items()}  # type: ignore[attr-defined,return-value]
    if kind is list:
        return [v if type(v) in _SCALARS else json_copy(v) for v in value]  # type: ignore[attr-defined,return-value]
    if kind in _SCALARS:
        return value
    import copy  # lazy: JSON data never gets here, and the start path copies only JSON data

    return copy.deepcopy(value)
