"""What an ``edit`` or ``write`` call would change, told before it runs (for approval dialogs: the
approvals plugin's unified diff, ACP's diff content)."""

from __future__ import annotations

import os
import stat
from typing import Any

from atomic_host.contract.records import record

__all__ = ["MAX_BYTES", "Change", "proposed_change", "tool_path", "unified_diff"]

MAX_BYTES = 1 << 20
"""Larger files get no proposed diff (reading and diffing them would hold up the question)."""


@record
class Change:
    """``path`` (absolute) from ``old`` (None: the file does not exist yet) to ``new``."""

    path: str
    old: str | None
    new: str


def tool_path(path: Any, cwd: str) -> str | None:
    """A tool's ``path`` argument as the built-in tools resolve it: ``@`` dropped, ``~`` expanded,
    relative to ``cwd``, normalised. None when it is no non-empty string."""
    if not isinstance(path, str) or not path.strip():
        return None
    path = path[1:] if path.startswith("@") else path
    full = os.path.expanduser(path)
    return os.path.normpath(full if os.path.isabs(full) else os.path.join(cwd, full))


def proposed_change(name: str, args: dict[str, Any], cwd: str) -> Change | None:
    """The change an ``edit`` or ``write`` call would make, from the file as it is now; None when it
    cannot be told (another tool, bad arguments, a file that is no regular file, unreadable, not
    UTF-8 or larger than :data:`MAX_BYTES`, an edit whose text is not found). Reads the disk: call
    it off the event loop."""
    if name not in ("edit", "write"):
        return None
    path = tool_path(args.get("path"), cwd)
    if path is None:
        return None
    old: str | None = None
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:  # a FIFO would block the read
            return None
        with open(path, encoding="utf-8", newline="") as f:
            old = f.read().replace("\r\n", "\n").removeprefix("\ufeff")
    except FileNotFoundError:
        old = None
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if name == "write":
        content = args.get("content")
        return Change(path, old, content) if isinstance(content, str) else None
    edits = args.get("edits")
    if old is None or not isinstance(edits, list) or not edits:
        return None
    new = old
    for edit in edits:
        if not isinstance(edit, dict):
            return None
        before, after = edit.get("oldText"), edit.get("newText")
        if not isinstance(before, str) or not isinstance(after, str) or not before or before not in new:
            return None
        new = new.replace(before, after, 1)
    return Change(path, old, new)


def unified_diff(change: Change, cwd: str) -> str:
    """``change`` as a unified diff (``--- a/<path>`` / ``+++ b/<path>``, relative to ``cwd`` when
    inside it; ``/dev/null`` for a new file)."""
    import difflib  # only when a dialog shows a diff: not on every start

    rel = os.path.relpath(change.path, cwd)
    shown = change.path if rel.startswith("..") else rel
    before = "/dev/null" if change.old is None else f"a/{shown}"
    lines = difflib.unified_diff(
        _lines(change.old or ""),
        _lines(change.new),
        before,
        f"b/{shown}",
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def _lines(text: str) -> list[str]:
    """Lines split on ``\n`` only (``splitlines`` would also split on U+2028 and friends), ends kept."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    return [*lines, parts[-1]] if parts[-1] else lines
