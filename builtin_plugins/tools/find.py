"""find: glob search for paths, .gitignore-aware, pruning .git and node_modules."""

from __future__ import annotations

import os
import re
import time

from pydantic import BaseModel, Field

from atomic_host.contract.tools import ToolContext, ToolError, ToolResult
from builtin_plugins.tools._common import display_path, resolve_path

TIME_BUDGET_SECONDS = 5.0


class Params(BaseModel):
    pattern: str = Field(
        description="Glob pattern. Without '/' it matches file names at any depth; with '/' it matches "
        "the path relative to the search directory ('**' spans directories)."
    )
    path: str | None = Field(None, description="Directory to search in (default: working directory)")
    limit: int = Field(200, ge=1, le=1000, description="Maximum number of results (default 200, max 1000)")
    hidden: bool = Field(True, description="Include hidden (dot) files and directories")


def compile_glob(pattern: str) -> tuple[re.Pattern[str], bool]:
    """Regex for ``pattern`` and whether it matches the whole relative path (vs the name)."""
    from builtin_plugins.tools._gitignore import _glob_to_regex

    pattern = pattern.strip()
    while pattern.startswith("./"):
        pattern = pattern[2:]
    on_path = "/" in pattern.rstrip("/")
    return re.compile("^" + _glob_to_regex(pattern.lstrip("/")) + "$", re.DOTALL), on_path


async def run(params: Params, ctx: ToolContext) -> ToolResult:
    from builtin_plugins.tools._gitignore import walk

    if not params.pattern.strip():
        raise ToolError("pattern must not be empty")
    root = resolve_path(params.path or ".", ctx.cwd)
    if not root.is_dir():
        raise ToolError(f"Directory not found: {display_path(root, ctx.cwd)}")
    dirs_only = params.pattern.rstrip().endswith("/")
    rx, on_path = compile_glob(params.pattern.rstrip().rstrip("/") if dirs_only else params.pattern)
    found: list[str] = []
    more = timed_out = False
    deadline = time.monotonic() + TIME_BUDGET_SECONDS
    for i, (p, is_dir) in enumerate(walk(root, hidden=params.hidden, include_dirs=True)):
        if i % 512 == 0 and (time.monotonic() > deadline or ctx.signal.is_set()):
            timed_out = True
            break
        if dirs_only and not is_dir:
            continue
        subject = os.path.relpath(p, root).replace(os.sep, "/") if on_path else os.path.basename(p)
        if rx.match(subject):
            if len(found) >= params.limit:
                more = True
                break
            found.append(display_path(p, ctx.cwd) + ("/" if is_dir else ""))
    text = "\n".join(found) if found else f"No files found matching {params.pattern!r}"
    if more:
        text += f"\n\n[Showing the first {params.limit} results. Use a more specific pattern or path.]"
    if timed_out:
        text += f"\n\n[Search stopped after {TIME_BUDGET_SECONDS:g} s; results are partial. Narrow the path.]"
    return ToolResult.text(text, {"count": len(found), "truncated": more or timed_out})
