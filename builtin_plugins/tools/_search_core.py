"""The search itself: walk, read, match, format one page. Standard library only.

It runs in a worker process (see ``_worker``), because one regular-expression call can
backtrack for minutes while holding the GIL: in a thread that would freeze the host's event
loop, and nothing can interrupt it but killing the process. ``search(request)`` takes and
returns plain JSON-able dicts.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from builtin_plugins.tools._gitignore import compile_glob, iter_tree
from builtin_plugins.tools._text import decode_text, display_name, split_lines

FILES_PER_PAGE = 20
MATCHES_PER_FILE = 20
MATCHES_SINGLE_FILE = 200
MAX_LINE_CHARS = 512
MAX_FILE_BYTES = 20 * 1024 * 1024
ARCHIVE_SECONDS = 60.0
"""How long the members of one archive may take (the worker is killed on abort anyway)."""
LEAD_CHARS = 100
"""Characters shown before a match that starts beyond the cut of a long line."""

# Constructs that see the string's ends differently from line ends: with them, a whole-file
# pre-check could reject a file whose lines match, so every line is tried instead.
_NO_PRECHECK = re.compile(r"\\[AZ]|\(\?[=!]|\(\?<[=!]")


def compile_pattern(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    """The search regex (raises ``re.error``). MULTILINE: ``^``/``$`` hold at each line."""
    return re.compile(pattern, re.MULTILINE | (re.IGNORECASE if ignore_case else 0))


def _cut(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + " …[line truncated]"


def _cut_hit(line: str, rx: re.Pattern[str]) -> str:
    """A matching line capped at 512 characters, showing the match even deep inside a long line."""
    if len(line) <= MAX_LINE_CHARS:
        return line
    m = rx.search(line)
    if m is None or m.end() <= MAX_LINE_CHARS or m.start() < LEAD_CHARS:
        return _cut(line)
    start = m.start() - LEAD_CHARS
    tail = " …[line truncated]" if start + MAX_LINE_CHARS < len(line) else ""
    return f"[…{start} chars] " + line[start : start + MAX_LINE_CHARS] + tail


def matching_lines(text: str, rx: re.Pattern[str], precheck: bool = True) -> tuple[list[str], list[int]]:
    """The file's lines (grep numbering) and the indexes of those ``rx`` finds a match in."""
    if precheck:
        # One pass over the whole file rejects most files; it sees the same line contents as
        # split_lines (CR before LF dropped), and the pattern has no construct that tells a
        # line end from a string end.
        joined = text
        if "\r" in text:
            joined = text.replace("\r\n", "\n")
            if joined.endswith("\r"):
                joined = joined[:-1]
        if rx.search(joined) is None:
            return [], []
    lines = split_lines(text)
    search = rx.search
    return lines, [i for i, line in enumerate(lines) if search(line)]


def format_hits(
    lines: list[str], hits: list[int], rx: re.Pattern[str], before: int, after: int, limit: int
) -> list[str]:
    """Numbered match lines (``N:``) with context (``N-``), ``--`` between separate groups."""
    hit_set = set(hits)
    out: list[str] = []
    last = -1
    for i in hits[:limit]:
        lo, hi = max(0, i - before), min(len(lines) - 1, i + after)
        if last >= 0 and lo > last + 1:
            out.append("  --")
        for j in range(max(lo, last + 1), hi + 1):
            if j in hit_set:
                out.append(f"  {j + 1}: {_cut_hit(lines[j], rx)}")
            else:
                out.append(f"  {j + 1}- {_cut(lines[j])}")
        last = max(last, hi)
    if len(hits) > limit:
        out.append(f"  [{len(hits) - limit} more matches in this file]")
    return out


def read_text(path: str) -> str | None:
    """A regular file's text, or None when it is binary, too big, unreadable or gone."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_FILE_BYTES:
                return None
            data = f.read(size + 1)  # not read(MAX + 1): that allocates 20 MiB per small file
            if len(data) > size:  # it grew since fstat
                data += f.read(MAX_FILE_BYTES + 1 - len(data))
    except OSError:
        return None
    if len(data) > MAX_FILE_BYTES:
        return None
    return decode_text(data)


def _display(path: str, cwd: str) -> str:
    rel = os.path.relpath(path, cwd)
    return display_name(path if rel.startswith("..") else rel)


def candidate_files(
    root: Path, *, single: bool, glob: str | None, gitignore: bool, check: Callable[[], None] | None = None
) -> Iterator[str]:
    """The files a search reads, in order: regular files only (ripgrep neither follows symlinks
    found in the walk nor reads FIFOs or devices), filtered by ``glob``."""
    if single:
        yield str(root)
        return
    rx_glob, on_path = compile_glob(glob) if glob else (None, False)
    for entry in iter_tree(root, hidden=True, gitignore=gitignore, check=check):
        if entry.kind != "file":
            continue
        if rx_glob is not None:
            subject = entry.rel if on_path else os.path.basename(entry.rel)
            if not rx_glob.match(subject):
                continue
        yield entry.path


def archive_texts(path: str, glob: str | None, cwd: str) -> Iterator[tuple[str, str | None]]:
    """``(display name, text or None)`` of each member of the archive at ``path`` (``glob`` on the
    member path), each member at most :data:`MAX_FILE_BYTES`, in one pass; a broken archive (or one
    that takes longer than :data:`ARCHIVE_SECONDS`) yields nothing more."""
    from builtin_plugins.tools.sources.archives import archive_kind, iter_contents
    from builtin_plugins.tools.sources.limits import Budget, SourceError

    kind = archive_kind(path) or "zip"
    rx_glob, on_path = compile_glob(glob) if glob else (None, False)
    shown = _display(path, cwd)

    def wanted(member: Any) -> bool:
        return rx_glob is None or bool(rx_glob.match(member.name if on_path else member.name.rsplit("/", 1)[-1]))

    try:
        for member, data in iter_contents(path, kind, Budget(shown, ARCHIVE_SECONDS), MAX_FILE_BYTES, wanted):
            yield f"{shown}:{display_name(member.name)}", decode_text(data)
    except SourceError:
        return


def _sources(request: dict[str, Any], check: Callable[[], None] | None) -> Iterator[tuple[str, str | None]]:
    """``(display name, text or None)`` of every file and archive member the search reads."""
    from builtin_plugins.tools.sources.archives import archive_kind

    cwd = request["cwd"]
    roots = request.get("roots") or [request["root"]]
    for root_text in roots:
        root = Path(root_text)
        single = root.is_file()
        if single and archive_kind(root.name):
            yield from archive_texts(str(root), request.get("glob"), cwd)
            continue
        files = candidate_files(
            root, single=single, glob=request.get("glob"), gitignore=request.get("gitignore", True), check=check
        )
        for path in files:
            yield _display(path, cwd), read_text(path)


def search(request: dict[str, Any], check: Callable[[], None] | None = None) -> dict[str, Any]:
    """One page of results: ``{"text", "details"}`` for the ``search`` tool.

    ``request``: pattern, ignoreCase, roots (absolute paths: directories, files, archives; or one
    ``root``), cwd, glob, before, after, limit (None = default), skip, gitignore.
    """
    rx = compile_pattern(request["pattern"], bool(request.get("ignoreCase")))
    precheck = _NO_PRECHECK.search(request["pattern"]) is None
    skip = int(request.get("skip") or 0)
    roots = request.get("roots") or [request["root"]]
    from builtin_plugins.tools.sources.archives import archive_kind

    single = len(roots) == 1 and Path(roots[0]).is_file() and not archive_kind(roots[0])
    limit = request.get("limit") or (MATCHES_SINGLE_FILE if single else MATCHES_PER_FILE)
    before, after = int(request["before"]), int(request["after"])
    blocks: list[str] = []
    seen = total_matches = 0
    more = False
    for shown, text in _sources(request, check):
        if text is None:
            continue
        lines, hits = matching_lines(text, rx, precheck)
        if not hits:
            continue
        seen += 1
        if seen <= skip:
            continue
        if len(blocks) >= FILES_PER_PAGE:
            more = True
            break
        total_matches += len(hits)
        blocks.append(shown + "\n" + "\n".join(format_hits(lines, hits, rx, before, after, limit)))
    pattern = request["pattern"]
    if not blocks:
        text = f"No matches for {pattern!r}" + (f" after skipping {skip} files" if skip else "")
    else:
        text = "\n\n".join(blocks)
    if more:
        nxt = skip + FILES_PER_PAGE
        text += f"\n\n[Showing files {skip + 1}-{nxt} with matches. Continue with skip={nxt}.]"
    details = {
        "files": len(blocks),
        "matches": total_matches,
        "more": more,
        "nextSkip": skip + FILES_PER_PAGE if more else None,
    }
    return {"text": text, "details": details}
