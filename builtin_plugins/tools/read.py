"""read: files (head-truncated plain text), directories, images, SQLite databases.

Text comes back exactly as stored (line endings shown as ``\\n``) under a one-line
``[path]`` header, so any part of it can be copied into ``edit``'s ``oldText``. All file work
runs in a worker thread (``ctx.run_blocking``); the directory tree checks for an abort per entry.
"""

from __future__ import annotations

import base64
import difflib
import os
import re
from pathlib import Path

from pydantic import BaseModel, Field

from atomic_host.contract.tools import ToolContext, ToolError, ToolResult
from atomic_host.kit.truncate import DEFAULT_MAX_BYTES, truncate_head
from builtin_plugins.tools._common import display_name, display_path, looks_binary, resolve_path
from builtin_plugins.tools._gitignore import iter_tree

IMAGE_MAX_BYTES = 20 * 1024 * 1024
_SELECTOR = re.compile(r"^(?P<path>.+?):(?P<sel>raw|\d+(?:[-+]\d+)?(?:,\d+-\d+)*)$")


class Params(BaseModel):
    path: str = Field(
        description="File or directory to read, relative to the working directory (~ allowed). "
        "A suffix :N starts at line N, :A-B reads lines A to B, :A+C reads C lines from A."
    )
    offset: int | None = Field(None, ge=1, description="Line number to start from (1-based)")
    limit: int | None = Field(None, ge=1, description="Maximum number of lines to read")


def image_mime(head: bytes) -> str | None:
    """MIME type from magic bytes for the image formats models accept."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _parse_selector(raw: str, cwd: str) -> tuple[Path, list[tuple[int, int | None]] | None]:
    """Split ``file:sel`` into path and ranges (start, inclusive end or None).

    Only when a file literally named ``file:sel`` does not exist.
    """
    path = resolve_path(raw, cwd)
    m = _SELECTOR.match(raw)
    if m is None or path.exists():
        return path, None
    sel = m.group("sel")
    base = resolve_path(m.group("path"), cwd)
    if sel == "raw":
        return base, None
    ranges: list[tuple[int, int | None]] = []
    for part in sel.split(","):
        if "+" in part:
            a, c = (int(x) for x in part.split("+"))
            ranges.append((max(a, 1), max(a, 1) + max(c, 1) - 1))
        elif "-" in part:
            a, b = (int(x) for x in part.split("-"))
            if b < a:
                raise ToolError(f"Invalid line range {part}: end before start")
            ranges.append((max(a, 1), b))
        else:
            ranges.append((max(int(part), 1), None))
    return base, ranges


def _not_found(path: Path, cwd: str) -> ToolError:
    msg = f"File not found: {display_path(path, cwd)}"
    try:
        names = os.listdir(path.parent)
        close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
        if close:
            msg += ". Did you mean: " + ", ".join(display_name(c) for c in close) + "?"
    except OSError:
        pass
    return ToolError(msg)


def _read_text(path: Path, rel: str, data: bytes, start: int, end: int | None) -> ToolResult:
    text = data.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    total = len(lines)
    if total == 0:
        return ToolResult.text(f"[{rel}]\n(empty file)", {"path": str(path), "totalLines": 0})
    if start > total:
        raise ToolError(f"Offset {start} is beyond the end of {rel} ({total} lines)")
    stop = total if end is None else min(end, total)
    selected = "\n".join(lines[start - 1 : stop])
    tr = truncate_head(selected)
    if tr.first_line_exceeds_limit:
        size = len(lines[start - 1].encode("utf-8")) // 1024
        raise ToolError(
            f"Line {start} of {rel} is {size} KiB, over the {DEFAULT_MAX_BYTES // 1024} KiB read limit. "
            f"Use bash to see part of it, e.g. sed -n '{start}p' {rel} | cut -c1-2000"
        )
    shown_last = start + tr.last_line - 1
    body = tr.content
    note = ""
    if tr.truncated or stop < total:
        note = f"\n\n[Showing lines {start}-{shown_last} of {total}. Continue with offset={shown_last + 1}.]"
        if shown_last >= total:
            note = ""
    details = {
        "path": str(path),
        "totalLines": total,
        "firstLine": start,
        "lastLine": shown_last,
        "truncation": tr.to_details() if tr.truncated else None,
    }
    return ToolResult.text(f"[{rel}]\n{body}{note}", details)


def _tree(path: Path, ctx: ToolContext, limit: int = 500) -> ToolResult:
    lines = [display_path(path, ctx.cwd).rstrip("/") + "/"]
    count = 0
    more = False
    for entry in iter_tree(path, max_depth=2, check=ctx.check_cancelled):
        if count >= limit:
            more = True
            break
        depth = entry.rel.count("/")
        name = display_name(entry.rel.rsplit("/", 1)[-1])
        lines.append("  " * (depth + 1) + name + ("/" if entry.kind == "dir" else ""))
        count += 1
    if count == 0:
        lines.append("  (empty directory)")
    if more:
        lines.append(f"[Showing the first {limit} entries. Use ls or find with a narrower path for more.]")
    return ToolResult.text("\n".join(lines), {"path": str(path), "entries": count, "truncated": more})


def _sqlite_summary(path: Path, rel: str) -> ToolResult:
    # lazy: sqlite3 only to summarize a SQLite file
    import sqlite3

    uri = "file:" + str(path).replace("?", "%3F").replace("#", "%23") + "?mode=ro"
    try:
        con = sqlite3.connect(uri, uri=True, timeout=1)
    except sqlite3.Error as e:
        raise ToolError(f"Cannot open SQLite database {rel}: {e}") from e
    try:
        rows = con.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE type IN ('table','view') "
            "AND name NOT LIKE 'sqlite_%' ORDER BY type, name"
        ).fetchall()
        out = [f"[{rel}] SQLite database, {len(rows)} tables/views"]
        for kind, name, _sql in rows:
            qname = '"' + name.replace('"', '""') + '"'
            cols = con.execute(f"PRAGMA table_info({qname})").fetchall()
            coldesc = ", ".join(f"{c[1]} {c[2]}".strip() + (" PK" if c[5] else "") for c in cols)
            try:
                n = con.execute(f"SELECT count(*) FROM {qname}").fetchone()[0]
                count = f"{n} rows"
            except sqlite3.Error:
                count = "rows unknown"
            out.append(f"{kind} {name} ({count}): {coldesc}")
    except sqlite3.Error as e:
        raise ToolError(f"Cannot read SQLite database {rel}: {e}") from e
    finally:
        con.close()
    out.append("Query it with bash: sqlite3 " + rel + " 'SELECT ...'")
    return ToolResult.text("\n".join(out), {"path": str(path), "kind": "sqlite"})


async def run(params: Params, ctx: ToolContext) -> ToolResult:
    return await ctx.run_blocking(lambda: _read(params, ctx), label="Read")


def _read(params: Params, ctx: ToolContext) -> ToolResult:
    path, ranges = _parse_selector(params.path, ctx.cwd)
    rel = display_path(path, ctx.cwd)
    if not path.exists():
        raise _not_found(path, ctx.cwd)
    if path.is_dir():
        return _tree(path, ctx)
    if not path.is_file():
        raise ToolError(f"Not a regular file: {rel}")
    try:
        with open(path, "rb") as f:
            head = f.read(8192)
    except PermissionError as e:
        raise ToolError(f"Permission denied: {rel}") from e
    mime = image_mime(head)
    if mime is not None:
        size = path.stat().st_size
        if size > IMAGE_MAX_BYTES:
            raise ToolError(f"Image {rel} is {size // (1024 * 1024)} MiB, over the 20 MiB limit")
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        return ToolResult(
            [
                {"type": "text", "text": f"Read image file {rel} [{mime}]"},
                {"type": "image", "data": data, "mimeType": mime},
            ],
            {"path": str(path), "mimeType": mime},
        )
    if head.startswith(b"SQLite format 3\x00"):
        return _sqlite_summary(path, rel)
    if looks_binary(head):
        size = path.stat().st_size
        raise ToolError(
            f"Cannot read binary file {rel} ({size} bytes). Use bash (e.g. xxd {rel} | head) instead."
        )
    data = path.read_bytes()
    start, end = params.offset or 1, None
    if params.limit is not None:
        end = start + params.limit - 1
    if ranges:
        if len(ranges) == 1:
            start, end = ranges[0]
        else:
            parts = [_read_text(path, rel, data, a, b) for a, b in ranges]
            text = "\n\n".join(p.content[0]["text"] for p in parts)
            return ToolResult.text(text, {"path": str(path), "ranges": [list(r) for r in ranges]})
    return _read_text(path, rel, data, start, end)
