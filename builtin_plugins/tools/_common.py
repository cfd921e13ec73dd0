"""Helpers shared by the built-in tools: path resolution, text sniffing (atomic writes: ``kit.fsio``)."""

from __future__ import annotations

import os
from pathlib import Path

from atomic_host.contract.tools import ToolError
from builtin_plugins.tools._text import display_name, looks_binary

__all__ = ["count_lines", "display_name", "display_path", "looks_binary", "resolve_path"]


def resolve_path(path: str, cwd: str) -> Path:
    """``path`` relative to ``cwd`` with ``~`` expanded (an ``@`` prefix models like is dropped)."""
    if not path or not path.strip():
        raise ToolError("path must not be empty")
    if path.startswith("@"):
        path = path[1:]
    p = Path(os.path.expanduser(path))
    if not p.is_absolute():
        p = Path(cwd) / p
    return Path(os.path.normpath(p))


def display_path(path: Path, cwd: str) -> str:
    """Path as shown to the model: relative to cwd when inside it."""
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:
        return display_name(str(path))
    return display_name(str(path) if rel.startswith("..") else rel)


def count_lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)
