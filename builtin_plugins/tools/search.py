"""search: regex search over file contents, .gitignore-aware, paged by files."""

from __future__ import annotations

import os
import re
from pathlib import Path

from pydantic import BaseModel, Field

from atomic_host.contract.tools import ToolContext, ToolError, ToolResult
from builtin_plugins.tools._common import display_path, looks_binary, resolve_path

FILES_PER_PAGE = 20
MATCHES_PER_FILE = 20
MATCHES_SINGLE_FILE = 200
MAX_LINE_CHARS = 512
MAX_FILE_BYTES = 20 * 1024 * 1024


class Params(BaseModel):
    pattern: str = Field(description="Regular expression to search for")
    path: str | None = Field(None, description="File or directory to search (default: working directory)")
    glob: str | None = Field(
        None,
        description="Only search files whose name (or relative path, if it has '/') matches this glob, "
        "e.g. '*.py'",
    )
    ignoreCase: bool = Field(False, description="Case-insensitive matching")
    context: int | None = Field(
        None,
        ge=0,
        le=20,
        description="Context lines before and after each match (default: 1 before, 3 after)",
    )
    limit: int | None = Field(
        None,
        ge=1,
        le=200,
        description="Maximum matches shown per file (default 20; 200 when searching one file)",
    )
    skip: int = Field(0, ge=0, description="Number of matching files to skip (for paging)")


def _cut(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + " …[line truncated]"


def _search_file(
    path: Path, rx: re.Pattern[str], before: int, after: int, limit: int
) -> tuple[list[str], int] | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if looks_binary(data[:8192]):
        return None
    text = data.decode("utf-8", errors="replace")
    if rx.search(text) is None:  # fast whole-file reject; MULTILINE keeps ^/$ per line
        return None
    lines = text.splitlines()
    hits = [i for i, line in enumerate(lines) if rx.search(line)]
    if not hits:
        return None
    hit_set = set(hits)
    out: list[str] = []
    last = -1
    for i in hits[:limit]:
        lo, hi = max(0, i - before), min(len(lines) - 1, i + after)
        if last >= 0 and lo > last + 1:
            out.append("  --")
        for j in range(max(lo, last + 1), hi + 1):
            sep = ":" if j in hit_set else "-"
            out.append(f"  {j + 1}{sep} {_cut(lines[j])}")
        last = max(last, hi)
    if len(hits) > limit:
        out.append(f"  [{len(hits) - limit} more matches in this file]")
    return out, len(hits)


async def run(params: Params, ctx: ToolContext) -> ToolResult:
    from builtin_plugins.tools._gitignore import walk
    from builtin_plugins.tools.find import compile_glob

    if not params.pattern.strip():
        raise ToolError("pattern must not be empty or whitespace only")
    try:
        rx = re.compile(params.pattern, re.MULTILINE | (re.IGNORECASE if params.ignoreCase else 0))
    except re.error as e:
        raise ToolError(f"Invalid regular expression: {e}") from e
    root = resolve_path(params.path or ".", ctx.cwd)
    if not root.exists():
        raise ToolError(f"Path not found: {display_path(root, ctx.cwd)}")
    before = after = params.context if params.context is not None else -1
    if before < 0:
        before, after = 1, 3
    single = root.is_file()
    limit = params.limit or (MATCHES_SINGLE_FILE if single else MATCHES_PER_FILE)
    glob = compile_glob(params.glob) if params.glob else None

    files = iter([(str(root), False)]) if single else walk(root, hidden=True)
    blocks: list[str] = []
    seen = total_matches = 0
    more = False
    for n, (p, _is_dir) in enumerate(files):
        if n % 256 == 0 and ctx.signal.is_set():
            raise ToolError("Search aborted")
        if glob is not None and not single:
            rx_glob, on_path = glob
            subject = os.path.relpath(p, root).replace(os.sep, "/") if on_path else os.path.basename(p)
            if not rx_glob.match(subject):
                continue
        found = _search_file(Path(p), rx, before, after, limit)
        if found is None:
            continue
        seen += 1
        if seen <= params.skip:
            continue
        if len(blocks) >= FILES_PER_PAGE:
            more = True
            break
        lines, count = found
        total_matches += count
        blocks.append(display_path(Path(p), ctx.cwd) + "\n" + "\n".join(lines))
    if not blocks:
        text = f"No matches for {params.pattern!r}" + (
            f" after skipping {params.skip} files" if params.skip else ""
        )
    else:
        text = "\n\n".join(blocks)
    if more:
        nxt = params.skip + FILES_PER_PAGE
        text += f"\n\n[Showing files {params.skip + 1}-{nxt} with matches. Continue with skip={nxt}.]"
    return ToolResult.text(
        text,
        {
            "files": len(blocks),
            "matches": total_matches,
            "more": more,
            "nextSkip": params.skip + FILES_PER_PAGE if more else None,
        },
    )
