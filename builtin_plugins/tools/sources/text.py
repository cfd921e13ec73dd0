"""Text for the model: lines picked by a selector or offset/limit, head-truncated, under a ``[label]`` header."""

from __future__ import annotations

from typing import Any

from atomic_host.contract.tools import ToolError, ToolResult
from atomic_host.kit.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, truncate_head
from builtin_plugins.tools.sources.selector import Located, SelectorError


def decode(data: bytes) -> str:
    """File bytes as text: bad UTF-8 as U+FFFD, no byte order mark, CRLF as LF."""
    text = data.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n")


def text_result(
    label: str, text: str, start: int, end: int | None, details: dict[str, Any], note: str = ""
) -> ToolResult:
    """Lines ``start``..``end`` of ``text`` under a ``[label]`` header (``note`` after it), head-truncated."""
    header = f"[{label}] {note}" if note else f"[{label}]"
    total = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    if total == 0:
        return ToolResult.text(f"{header}\n(empty file)", {**details, "totalLines": 0})
    if start > total:
        raise ToolError(f"Offset {start} is beyond the end of {label} ({total} lines)")
    stop = total if end is None else min(end, total)
    # only the lines that can be shown are split out: a 50 MB member costs one pass, not a list of all its lines
    lines = _lines(text, start, min(stop - start + 1, DEFAULT_MAX_LINES))
    tr = truncate_head("\n".join(lines))
    if tr.first_line_exceeds_limit:
        size = len(lines[0].encode("utf-8")) // 1024
        raise ToolError(
            f"Line {start} of {label} is {size} KiB, over the {DEFAULT_MAX_BYTES // 1024} KiB read limit. "
            f"Use bash to see part of it, e.g. sed -n '{start}p' {label} | cut -c1-2000"
        )
    shown_last = start + tr.last_line - 1
    more = ""
    if shown_last < stop or stop < total:
        more = f"\n\n[Showing lines {start}-{shown_last} of {total}. Continue with offset={shown_last + 1}.]"
    details = {
        **details,
        "totalLines": total,
        "firstLine": start,
        "lastLine": shown_last,
        "truncation": tr.to_details() if tr.truncated else None,
    }
    return ToolResult.text(f"{header}\n{tr.content}{more}", details)


def _lines(text: str, start: int, count: int) -> list[str]:
    """``count`` lines of ``text`` from line ``start`` (1-based; ``start`` is at most the line count)."""
    pos = 0
    for _ in range(start - 1):
        pos = text.index("\n", pos) + 1
    return text[pos:].split("\n", count)[:count]


def select_lines(
    label: str,
    text: str,
    located: Located | None,
    offset: int | None,
    limit: int | None,
    details: dict[str, Any],
    note: str = "",
) -> ToolResult:
    """The lines ``located``'s ranges (or ``offset``/``limit``) pick out of ``text``; ``note`` follows the header."""
    ranges = ranges_of(located)
    if ranges and len(ranges) > 1:
        parts = [text_result(label, text, a, b, details, note) for a, b in ranges]
        joined = "\n\n".join(p.content[0]["text"] for p in parts)
        return ToolResult.text(joined, {**details, "ranges": [list(r) for r in ranges]})
    if ranges:
        start, end = ranges[0]
    else:
        start = offset or 1
        end = start + limit - 1 if limit is not None else None
    return text_result(label, text, start, end, details, note)


def ranges_of(located: Located | None) -> list[tuple[int, int | None]] | None:
    """The selector's ranges (None without one); a reversed range is a :class:`ToolError`."""
    if located is None:
        return None
    try:
        return located.ranges
    except SelectorError as e:
        raise ToolError(str(e)) from e
