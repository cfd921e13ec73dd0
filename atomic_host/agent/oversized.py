"""Oversized tool results (semantics §5.1): the full text goes to a private file, the model gets a
``<persisted-output>`` block with the size, the path and a short preview.

Files live in ``<sessionDir>/tool-results/<sanitized toolCallId>.txt`` for JSONL sessions, else
(in-memory, SQLite) in ``<session temp dir>/tool-results/``. Directories are 0700, files 0600; a
symlinked or foreign-owned directory is refused, and then the block says the output was not saved.
A session whose store is not a file store (its writer has ``put_blob``: postgres) keeps the text in
the store, as ``tool-results/<sanitized toolCallId>.txt``, and nothing on the local disk.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from atomic_host.contract.tools import ToolResult
from atomic_host.kit.fsio import private_dir
from atomic_host.kit.tempdirs import sanitize_id

if TYPE_CHECKING:
    from atomic_host.contract.tools import Tool


class _StoredSession(Protocol):
    location: str | None
    writer: Any


class ResultOwner(Protocol):
    """What persisting needs of the running session: where it is stored and its private temp dir."""

    @property
    def session(self) -> _StoredSession: ...

    def temp_dir(self) -> str | None: ...

DEFAULT_MAX_CHARS = 50_000
PREVIEW_BYTES = 2000


def result_limit(tool: Tool | None) -> int:
    """The character limit for ``tool``'s results; 0 means never persist."""
    if tool is None:
        return DEFAULT_MAX_CHARS
    if tool.max_result_chars is not None:
        return max(0, tool.max_result_chars)
    return DEFAULT_MAX_CHARS


def results_dir(agent: ResultOwner) -> Path | None:
    """Create (if needed) and return the private ``tool-results`` directory, or None if refused."""
    location = agent.session.location
    if location and location.endswith(".jsonl"):
        base: Path | None = Path(location).parent
        try:
            base.mkdir(parents=True, exist_ok=True, mode=0o700)  # type: ignore[union-attr]
        except OSError:
            return None
    else:
        temp = agent.temp_dir()
        base = Path(temp) if temp else None
    if base is None:
        return None
    path = base / "tool-results"
    return path if private_dir(path) else None


def _write_private(path: Path, text: str) -> bool:
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError:
        return False
    try:
        os.fchmod(fd, 0o600)  # an existing file keeps its mode on O_CREAT
        os.write(fd, text.encode("utf-8", "surrogatepass"))
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def preview(text: str, limit: int = PREVIEW_BYTES) -> str:
    """At most ``limit`` UTF-8 bytes of the start of ``text``, cut at the last whole line if there is one."""
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= limit:
        return text
    head = raw[:limit].decode("utf-8", "ignore")
    cut = head.rfind("\n")
    return head[:cut] if cut > 0 else head


def persisted_block(text: str, path: str | None, stored: str | None = None) -> str:
    size = f"{len(text):,} characters, {len(text.encode('utf-8', 'surrogatepass')):,} bytes"
    if stored:
        where = (
            f"Full output kept in the session store as {stored} (not a file: narrow the command, "
            "e.g. with grep, head or tail, to see other parts of it)."
        )
    else:
        where = f"Full output saved to: {path}" if path else "The full output could not be saved."
    return (
        f"<persisted-output>\nOutput too large ({size}). {where}\n\n"
        f"Preview (first {PREVIEW_BYTES} bytes):\n{preview(text)}\n...\n</persisted-output>"
    )


def _text_of(result: ToolResult) -> str:
    texts = [b.get("text", "") for b in result.content if isinstance(b, dict) and b.get("type") == "text"]
    return "\n".join(t for t in texts if isinstance(t, str))


def is_oversized(tool: Tool | None, result: ToolResult) -> bool:
    """Whether :func:`persist_if_oversized` would replace ``result`` (the caller then runs it in a
    thread: it writes a file or a database row)."""
    limit = result_limit(tool)
    return bool(limit) and len(_text_of(result)) > limit


def persist_if_oversized(
    agent: ResultOwner, tool: Tool | None, call_id: str, result: ToolResult
) -> ToolResult:
    """Return ``result`` unchanged, or with its text replaced by a ``<persisted-output>`` block."""
    limit = result_limit(tool)
    text = _text_of(result)
    if not limit or len(text) <= limit:
        return result
    path = stored = None
    keep = getattr(agent.session.writer, "put_blob", None)
    if keep is not None:
        try:
            stored = keep(f"tool-results/{sanitize_id(call_id)}.txt", text.encode("utf-8", "surrogatepass"))
        except OSError:
            stored = None
    else:
        directory = results_dir(agent)
        path = directory / f"{sanitize_id(call_id)}.txt" if directory else None
        if path is not None and not _write_private(path, text):
            path = None
    others = [b for b in result.content if not (isinstance(b, dict) and b.get("type") == "text")]
    content = [{"type": "text", "text": persisted_block(text, str(path) if path else None, stored)}, *others]
    details = result.details
    if details is None or isinstance(details, dict):
        record: dict[str, Any] = {"path": str(path) if path else None, "chars": len(text)}
        if stored:
            record["stored"] = stored
        details = {**(details or {}), "persistedOutput": record}
    return ToolResult(content, details, result.is_error)
