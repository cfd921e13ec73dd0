"""Shared helpers of the model tests."""

from __future__ import annotations

from typing import Any


def containers(value: Any) -> list[Any]:
    """Every dict and list inside ``value`` (itself included): what two values must not share when
    one is meant to be a copy of the other."""
    out, stack = [], [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict | list):
            out.append(node)
            stack.extend(node.values() if isinstance(node, dict) else node)
    return out
