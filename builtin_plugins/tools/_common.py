"""Helpers shared by the built-in tools: path resolution, atomic writes, text sniffing."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from atomic_host.contract.tools import ToolError
from builtin_plugins.tools._text import display_name, looks_binary

__all__ = ["atomic_write", "count_lines", "display_name", "display_path", "looks_binary", "resolve_path"]


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


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write via a temp file in the same directory and rename over ``path``.

    Keeps the existing file's permission bits (or ``mode``); a reader never sees a half-written file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def count_lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)
