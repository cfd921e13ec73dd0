"""read: one path string, many sources (the grammar: ``sources/selector.py``).

Plain text comes back exactly as stored (line endings shown as ``\\n``) under a one-line
``[path]`` header, so any part of it can be copied into ``edit``'s ``oldText``. Besides text:
directories (a depth-2 tree), archive members and listings, SQLite schemas, tables and queries,
documents (PDF, DOCX, PPTX, XLSX, EPUB, notebooks, HTML as markdown), images (checked, shrunk),
URLs, and ``skill://``/``artifact://`` resources.

File work runs in a worker thread (``ctx.run_blocking``) that checks the abort flag and a
deadline between chunks; document conversion runs in a child process that an abort or the
deadline kills; URLs are fetched on the event loop with httpx (asynchronous, never blocking it).
"""

from __future__ import annotations

import difflib
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from atomic_host.contract.tools import ToolContext, ToolError, ToolResult
from builtin_plugins.tools._common import display_name, display_path, looks_binary, resolve_path
from builtin_plugins.tools.sources.documents import DocumentJob, document_kind
from builtin_plugins.tools.sources.images import image_result
from builtin_plugins.tools.sources.limits import Budget, SourceError, time_budget
from builtin_plugins.tools.sources.selector import Located, locate, scheme_of, split_tail
from builtin_plugins.tools.sources.text import decode, ranges_of, select_lines

if TYPE_CHECKING:
    from builtin_plugins.tools.sources.archives import Member

RESOURCE_SCHEMES = ("skill", "artifact")
URL_SCHEMES = ("http", "https")
MAX_LISTED = 500


class Params(BaseModel):
    path: str = Field(
        description="What to read, relative to the working directory (~ allowed): a file, a directory, "
        "an archive member (a.zip:dir/f.txt, a.tar.gz:f), a SQLite table (db.sqlite:users) or query "
        "(db.sqlite?q=SELECT ...), a document (PDF, DOCX, PPTX, XLSX, EPUB, .ipynb), an image, a URL "
        "(https://...), skill://NAME[/FILE] or artifact://[ID]. A suffix :N starts at line N, :A-B reads "
        "lines A to B, :A+C reads C lines from A (pages of a PDF, slides, rows of a table); :raw gives a "
        "notebook's JSON, :md an HTML file as markdown."
    )
    offset: int | None = Field(None, ge=1, description="Line number to start from (1-based)")
    limit: int | None = Field(None, ge=1, description="Maximum number of lines to read")


def image_mime(head: bytes) -> str | None:
    """MIME type from magic bytes for the image formats models accept."""
    from atomic_host.kit.images import sniff_mime

    return sniff_mime(head)


def _kind_of(text: str, cwd: str) -> str | None:
    try:
        mode = os.stat(resolve_path(text, cwd)).st_mode
    except (OSError, ValueError, ToolError):
        return None
    return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


def _not_found(path: Path, cwd: str) -> ToolError:
    msg = f"File not found: {display_path(path, cwd)}"
    try:
        names = os.listdir(path.parent)
        close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
        if close:
            msg += ". Did you mean: " + ", ".join(display_name(c) for c in close) + "?"
    except (OSError, ValueError):  # ValueError: a NUL byte in the name
        pass
    return ToolError(msg)


def bytes_result(
    label: str, data: bytes, located: Located | None, params: Params, ctx: ToolContext, details: dict[str, Any]
) -> ToolResult:
    """An image, or text; binary data is refused."""
    mime = image_mime(data[:16])
    if mime is not None:
        return image_result(label, data, ctx, details)
    if looks_binary(data[:8192]):
        raise ToolError(
            f"Cannot read binary file {label} ({len(data)} bytes). Use bash (e.g. xxd {label} | head) instead."
        )
    return select_lines(label, decode(data), located, params.offset, params.limit, details)


# --- directories and archives ---


def _tree(path: Path, ctx: ToolContext, limit: int = MAX_LISTED) -> ToolResult:
    from builtin_plugins.tools._gitignore import iter_tree

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


def safe_name(name: str) -> str:
    """A member name for the model: non-UTF-8 bytes and control characters escaped."""
    name = display_name(name)
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        name = "".join(c if ord(c) >= 32 and ord(c) != 127 else f"\\x{ord(c):02x}" for c in name)
    return name


def _archive(
    path: Path, rel: str, kind: str, located: Located, params: Params, ctx: ToolContext
) -> ToolResult | DocumentJob:
    from builtin_plugins.tools.sources.archives import (
        MissingMember,
        is_archive_dir,
        iter_members,
        read_member,
    )

    inner = (located.inner or "").strip("/")
    budget = Budget(rel, time_budget(ctx.settings), ctx.check_cancelled)
    details: dict[str, Any] = {"path": str(path), "archive": kind}
    if inner:
        label = f"{rel}:{safe_name(inner)}"
        try:
            data = read_member(str(path), kind, inner, budget)
        except MissingMember:
            try:
                members = list(iter_members(str(path), kind, budget))
            except SourceError as e:
                raise ToolError(str(e)) from e
            if not is_archive_dir(members, inner):
                names = [m.name for m in members]
                close = difflib.get_close_matches(inner, names, n=3, cutoff=0.5)
                hint = f" Did you mean: {', '.join(safe_name(c) for c in close)}?" if close else ""
                raise ToolError(f"{rel} has no member {safe_name(inner)}.{hint} Read {rel} to list it.") from None
            return _listing(rel, members, inner, located, params, details)
        except SourceError as e:
            raise ToolError(str(e)) from e
        doc = document_kind(inner, data[:8], located.selector)
        if doc is not None and doc != "html":  # a PDF, an Office file, a notebook inside the archive
            from dataclasses import replace

            from builtin_plugins.tools.sources.documents import private_copy

            copy = private_copy(ctx, data, os.path.splitext(inner)[1] or ".pdf", label)
            return DocumentJob(copy, label, doc, replace(located, inner=None), params.offset, params.limit, True)
        return bytes_result(label, data, located, params, ctx, {**details, "member": inner})
    members: list[Member] = []
    try:
        members.extend(iter_members(str(path), kind, budget))  # what it reached stays when it stops early
    except SourceError as e:
        if not members:
            raise ToolError(str(e)) from e
        details["partial"] = str(e)
    return _listing(rel, members, "", located, params, details)


def _listing(
    rel: str, members: list[Member], inner: str, located: Located, params: Params, details: dict[str, Any]
) -> ToolResult:
    prefix = inner + "/" if inner else ""
    rows = []
    for m in members:
        if not m.name.startswith(prefix) or m.name == inner:
            continue
        size = "" if m.is_dir or m.size < 0 else f"  ({m.size:,} bytes)"
        link = f" -> {safe_name(m.link)}" if m.link else ""
        rows.append(safe_name(m.name) + ("/" if m.is_dir else "") + link + size)
    files = sum(1 for m in members if not m.is_dir and m.name.startswith(prefix))
    where = f"{rel}:{safe_name(inner)}" if inner else rel
    head = f"{files} files" + (f" in {safe_name(inner)}/" if inner else "")
    partial = f"\n[Listing stopped early: {details['partial']}]" if "partial" in details else ""
    text = "\n".join(rows) if rows else "(empty)"
    body = f"{head}. Read a member with {rel}:<member>.\n{text}{partial}"
    return select_lines(where, body, located, params.offset, params.limit, {**details, "entries": len(rows)})


# --- the dispatcher ---


def _read_local(raw: str, params: Params, ctx: ToolContext, label: str | None = None) -> ToolResult | DocumentJob:
    located = locate(raw, lambda text: _kind_of(text, ctx.cwd))
    if located is None:
        raise _not_found(resolve_path(split_tail(raw)[0], ctx.cwd), ctx.cwd)
    path = resolve_path(located.file, ctx.cwd)
    rel = label or display_path(path, ctx.cwd)
    kind = _kind_of(located.file, ctx.cwd)
    if kind == "dir":
        if located.inner or located.query:
            raise ToolError(f"{rel} is a directory: read {rel}/{located.inner or ''} as a path")
        return _tree(path, ctx)
    if kind != "file":
        raise ToolError(f"Not a regular file: {rel}")
    try:
        with open(path, "rb") as f:
            head = f.read(8192)
    except PermissionError as e:
        raise ToolError(f"Permission denied: {rel}") from e
    except OSError as e:
        raise ToolError(f"Cannot read {rel}: {e.strerror or e}") from e
    from builtin_plugins.tools.sources.archives import archive_kind

    details: dict[str, Any] = {"path": str(path)}
    archive = archive_kind(path.name)
    if archive is not None and located.selector not in ("raw",) and located.query is None:
        return _archive(path, rel, archive, located, params, ctx)
    if head.startswith(b"SQLite format 3\x00"):
        return _sqlite(path, rel, located, params, ctx)
    if located.query is not None:
        raise ToolError(f"?q= queries work on SQLite databases only; {rel} is not one")
    doc = document_kind(path.name, head, located.selector)
    if doc is not None:
        return DocumentJob(path, rel, doc, located, params.offset, params.limit)
    if located.inner is not None:
        raise ToolError(
            f"{rel} is a file, not an archive, database or workbook: cannot select {safe_name(located.inner)!r} "
            f"in it (read {rel} itself, or {rel}:A-B for lines)"
        )
    if located.selector == "md":
        raise ToolError(f":md renders HTML files as markdown; {rel} is not one")
    if image_mime(head[:16]) is not None:
        size = path.stat().st_size
        from atomic_host.kit.images import MAX_INPUT_BYTES

        if size > MAX_INPUT_BYTES:
            raise ToolError(
                f"Image {rel} is {size // (1024 * 1024)} MiB, over the {MAX_INPUT_BYTES // (1024 * 1024)} MiB limit"
            )
        return image_result(rel, path.read_bytes(), ctx, details)
    if looks_binary(head):
        size = path.stat().st_size
        raise ToolError(f"Cannot read binary file {rel} ({size} bytes). Use bash (e.g. xxd {rel} | head) instead.")
    return select_lines(rel, decode(path.read_bytes()), located, params.offset, params.limit, details)


def _sqlite(path: Path, rel: str, located: Located, params: Params, ctx: ToolContext) -> ToolResult:
    from builtin_plugins.tools.sources import sqlite

    budget = Budget(rel, time_budget(ctx.settings), ctx.check_cancelled)
    details: dict[str, Any] = {"path": str(path), "kind": "sqlite"}
    try:
        if located.query is not None:
            text, more = sqlite.query(str(path), rel, located.query, budget)
            return ToolResult.text(text, {**details, **more})
        if located.inner:
            ranges = ranges_of(located)
            first = params.offset or 1
            last = first + params.limit - 1 if params.limit else None
            if ranges:
                first, last = ranges[0]
            text, more = sqlite.table_rows(str(path), rel, located.inner, first, last, budget)
            return ToolResult.text(text, {**details, "table": located.inner, **more})
        return ToolResult.text(sqlite.summary(str(path), rel, budget), details)
    except SourceError as e:
        raise ToolError(str(e)) from e


async def run(params: Params, ctx: ToolContext) -> ToolResult:
    raw = params.path[1:] if params.path.startswith("@") else params.path
    label = None
    found = scheme_of(raw)
    if found is not None:
        scheme, rest = found
        if scheme in URL_SCHEMES:
            from builtin_plugins.tools.sources.urls import read_url

            return await read_url(raw, params, ctx)
        if scheme in RESOURCE_SCHEMES:
            from builtin_plugins.tools.sources.resources import resolve

            base, selector = split_tail(raw)
            label = base
            resolved = await ctx.run_blocking(lambda: resolve(base, ctx), label="Read")
            if isinstance(resolved, ToolResult):
                return resolved
            raw = resolved + (f":{selector}" if selector else "")
        elif scheme == "file":
            from urllib.parse import unquote

            raw = unquote(rest)
        else:
            raise ToolError(
                f"Unknown scheme {scheme}:// in {raw!r}. read understands http://, https://, skill://, "
                "artifact:// and file://; for other files give a path."
            )
    job = await ctx.run_blocking(lambda: _read_local(raw, params, ctx, label), label="Read")
    if isinstance(job, ToolResult):
        return job
    from builtin_plugins.tools.sources.documents import convert

    return await convert(job, ctx, time_budget(ctx.settings))
