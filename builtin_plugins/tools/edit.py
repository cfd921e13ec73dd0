"""edit: exact-text replacements, all applied or none, written atomically.

Every ``oldText`` is located in the original file and must occur exactly once; edits must not
overlap. CRLF files and a UTF-8 BOM are handled transparently: matching happens on the
``\\n`` text that ``read`` shows, and the file keeps its own line endings. Runs in a worker
thread; an abort before the write leaves the file as it was.
"""

from __future__ import annotations

import difflib
import itertools
import re

from pydantic import BaseModel, Field

from atomic_host.contract.tools import ToolContext, ToolError, ToolResult
from atomic_host.kit.fsio import atomic_write
from builtin_plugins.tools._common import display_path, resolve_path


class Replacement(BaseModel):
    oldText: str = Field(description="Exact text to find; must occur exactly once in the file")
    newText: str = Field(description="Text to put in its place")


class Params(BaseModel):
    path: str = Field(description="File to edit, relative to the working directory (~ allowed)")
    edits: list[Replacement] = Field(min_length=1, description="Replacements, matched against the original file")


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _find_all(text: str, needle: str) -> list[int]:
    out, i = [], text.find(needle)
    while i != -1:
        out.append(i)
        i = text.find(needle, i + 1)
    return out


_WS = re.compile(r"[ \t]+")


def _loose(s: str) -> str:
    # Whitespace-insensitive form: runs of blanks collapsed, trailing blanks dropped per line.
    return "\n".join(_WS.sub(" ", line).strip() for line in s.split("\n"))


def _loose_hint(text: str, old: str) -> str:
    """A hint when ``old`` would match after normalising whitespace."""
    target = _loose(old)
    if not target.strip():
        return ""
    lines = text.split("\n")
    n = old.count("\n") + 1
    hits = [i + 1 for i in range(len(lines) - n + 1) if _loose("\n".join(lines[i : i + n])) == target]
    if not hits:
        return ""
    where = ", ".join(str(h) for h in hits[:5])
    return (
        f" A whitespace-insensitive match exists at line {where}; copy the exact text "
        "(indentation, tabs vs spaces, trailing spaces) from read output."
    )


def _diff_summary(before: str, after: str, rel: str, max_lines: int = 60) -> tuple[str, int, int]:
    diff = list(difflib.unified_diff(before.split("\n"), after.split("\n"), f"a/{rel}", f"b/{rel}", n=1, lineterm=""))
    added = sum(1 for d in diff if d.startswith("+") and not d.startswith("+++"))
    removed = sum(1 for d in diff if d.startswith("-") and not d.startswith("---"))
    body = diff[2:]
    if len(body) > max_lines:
        body = [*body[:max_lines], f"... ({len(body) - max_lines} more diff lines)"]
    return "\n".join(body), added, removed


async def run(params: Params, ctx: ToolContext) -> ToolResult:
    return await ctx.run_blocking(lambda: _edit(params, ctx), label="Edit")


def _edit(params: Params, ctx: ToolContext) -> ToolResult:
    path = resolve_path(params.path, ctx.cwd)
    rel = display_path(path, ctx.cwd)
    if not path.is_file():
        raise ToolError(f"File not found: {rel}" if not path.exists() else f"Not a regular file: {rel}")
    raw = path.read_bytes()
    try:
        original = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ToolError(f"{rel} is not valid UTF-8 text; edit cannot change it safely") from e
    bom = original.startswith("\ufeff")
    if bom:
        original = original[1:]
    crlf = "\r\n" in original
    text = original.replace("\r\n", "\n") if crlf else original

    spans: list[tuple[int, int, int]] = []  # (start, end, edit index)
    problems: list[str] = []
    for i, e in enumerate(params.edits):
        old = e.oldText.replace("\r\n", "\n")
        label = f"Edit {i + 1}" if len(params.edits) > 1 else "oldText"
        if old == "":
            problems.append(f"{label}: oldText is empty")
            continue
        hits = _find_all(text, old)
        if not hits:
            problems.append(f"{label}: oldText not found in {rel}.{_loose_hint(text, old)}")
        elif len(hits) > 1:
            lines = ", ".join(str(_line_of(text, h)) for h in hits[:10])
            problems.append(
                f"{label}: oldText matches {len(hits)} times (at lines {lines}); "
                "include more surrounding context so it matches exactly once"
            )
        else:
            spans.append((hits[0], hits[0] + len(old), i))
    spans.sort()
    for (_s1, e1, i1), (s2, _e2, i2) in itertools.pairwise(spans):
        if s2 < e1:
            problems.append(
                f"Edits {i1 + 1} and {i2 + 1} overlap (line {_line_of(text, s2)}); merge them into one edit"
            )
    if problems:
        raise ToolError("No changes made. " + "\n".join(problems))

    pieces, pos = [], 0
    for start, end, i in spans:
        pieces.append(text[pos:start])
        pieces.append(params.edits[i].newText.replace("\r\n", "\n"))
        pos = end
    pieces.append(text[pos:])
    new_text = "".join(pieces)
    if new_text == text:
        raise ToolError(f"No changes made to {rel}: the replacements are identical to the original text")
    out = new_text.replace("\n", "\r\n") if crlf else new_text
    if bom:
        out = "\ufeff" + out
    ctx.check_cancelled()  # last point where an abort leaves the file untouched
    try:
        atomic_write(path, out.encode("utf-8"), None)
    except OSError as e:
        raise ToolError(f"Cannot write {rel}: {e.strerror or e}") from e
    diff, added, removed = _diff_summary(text, new_text, rel)
    first_line = _line_of(text, spans[0][0])
    summary = f"Edited {rel}: {len(spans)} replacement{'s' if len(spans) != 1 else ''}, +{added} -{removed} lines"
    return ToolResult.text(
        f"{summary}\n{diff}",
        {"path": str(path), "diff": diff, "firstChangedLine": first_line, "added": added, "removed": removed},
    )
