"""Head/tail truncation of tool output by line count and UTF-8 byte size.

Shared by the read tool (keeps the head), the bash tool and the RPC ``bash`` command (keep the
tail). Whole lines are kept; a single line bigger than the byte budget is cut (tail) or
reported (head) so callers can explain it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_MAX_LINES", "Truncation", "truncate_head", "truncate_tail"]

DEFAULT_MAX_LINES = 3000
DEFAULT_MAX_BYTES = 50 * 1024


@dataclass
class Truncation:
    """What a truncation kept: lines are 1-based and inclusive over the original text."""

    content: str
    truncated: bool
    total_lines: int
    total_bytes: int
    first_line: int
    """First kept line (1-based); ``last_line < first_line`` when nothing was kept."""
    last_line: int
    truncated_by: str | None = None
    """``"lines"`` or ``"bytes"`` when truncated."""
    first_line_exceeds_limit: bool = False
    """Head mode only: the very first line alone is over the byte budget."""
    last_line_partial: bool = False
    """Tail mode only: the kept first line is the cut end of a longer line."""

    def to_details(self) -> dict[str, object]:
        """JSON-shaped summary for tool ``details``."""
        return {
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": max(0, self.last_line - self.first_line + 1),
            "firstLine": self.first_line,
            "lastLine": self.last_line,
        }


def _split(text: str) -> list[str]:
    # A trailing newline does not start another line ("a\n" is one line).
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def _measure(text: str, max_lines: int, max_bytes: int) -> tuple[int, list[str], int, Truncation | None]:
    """(total bytes, lines, line count, the untruncated result when ``text`` already fits)."""
    total_bytes = len(text.encode("utf-8", "surrogatepass"))
    lines = _split(text)
    total = len(lines) if text else 0
    fits = total <= max_lines and total_bytes <= max_bytes
    return total_bytes, lines, total, Truncation(text, False, total, total_bytes, 1, total) if fits else None


def truncate_head(
    text: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> Truncation:
    """Keep the first lines of ``text`` within ``max_lines`` and ``max_bytes``."""
    total_bytes, lines, total, whole = _measure(text, max_lines, max_bytes)
    if whole is not None:
        return whole
    kept: list[str] = []
    size = 0
    by = "lines"
    for line in lines[:max_lines]:
        n = len(line.encode("utf-8", "surrogatepass")) + (1 if kept else 0)
        if size + n > max_bytes:
            by = "bytes"
            break
        kept.append(line)
        size += n
    if not kept and lines and len(lines[0].encode("utf-8", "surrogatepass")) > max_bytes:
        return Truncation("", True, total, total_bytes, 1, 0, "bytes", first_line_exceeds_limit=True)
    if len(kept) == min(total, max_lines) and total > max_lines:
        by = "lines"
    return Truncation("\n".join(kept), True, total, total_bytes, 1, len(kept), by)


def truncate_tail(
    text: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> Truncation:
    """Keep the last lines of ``text`` within ``max_lines`` and ``max_bytes``."""
    total_bytes, lines, total, whole = _measure(text, max_lines, max_bytes)
    if whole is not None:
        return whole
    kept: list[str] = []
    size = 0
    by = "lines"
    partial = False
    for line in reversed(lines[-max_lines:]):
        raw = line.encode("utf-8", "surrogatepass")
        n = len(raw) + (1 if kept else 0)
        if size + n > max_bytes:
            by = "bytes"
            if not kept:
                # One enormous last line: keep its end, cut on a character boundary.
                kept.append(raw[-max_bytes:].decode("utf-8", "ignore"))
                partial = True
            break
        kept.append(line)
        size += n
    kept.reverse()
    if len(kept) == min(total, max_lines) and total > max_lines and not partial:
        by = "lines"
    return Truncation(
        "\n".join(kept),
        True,
        total,
        total_bytes,
        total - len(kept) + 1,
        total,
        by,
        last_line_partial=partial,
    )
