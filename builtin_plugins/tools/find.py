"""find: glob search for paths, .gitignore-aware, pruning .git and node_modules.

The walk runs in a worker thread (``ctx.run_blocking``) that checks for an abort at every
entry; glob regexes are linear (see ``_gitignore``), so one match never holds the GIL long.
"""

from __future__ import annotations

import re
import time

from pydantic import BaseModel, Field

from atomic_host.contract.tools import ToolContext, ToolError, ToolResult
from builtin_plugins.tools._common import display_path, resolve_path
from builtin_plugins.tools._gitignore import compile_glob as compile_tool_glob
from builtin_plugins.tools._gitignore import iter_tree

TIME_BUDGET_SECONDS = 5.0


class Params(BaseModel):
    pattern: str = Field(
        description="Glob pattern. Without '/' it matches file names at any depth; with '/' it matches "
        "the path relative to the search directory ('**' spans directories)."
    )
    path: str | None = Field(None, description="Directory to search in (default: working directory)")
    limit: int = Field(200, ge=1, le=1000, description="Maximum number of results (default 200, max 1000)")
    hidden: bool = Field(True, description="Include hidden (dot) files and directories")
    gitignore: bool = Field(True, description="Skip paths ignored by .gitignore (false: list them too)")
    timeout: float = Field(
        TIME_BUDGET_SECONDS, ge=0.5, le=60, description="Stop after this many seconds with partial results"
    )


def compile_glob(pattern: str) -> tuple[re.Pattern[str], bool]:
    """Regex for ``pattern`` and whether it matches the whole relative path (vs the name)."""
    return compile_tool_glob(pattern)


def _find(params: Params, ctx: ToolContext) -> ToolResult:
    root = resolve_path(params.path or ".", ctx.cwd)
    if not root.is_dir():
        raise ToolError(f"Directory not found: {display_path(root, ctx.cwd)}")
    dirs_only = params.pattern.rstrip().endswith("/")
    rx, on_path = compile_glob(params.pattern.rstrip().rstrip("/") if dirs_only else params.pattern)
    found: list[str] = []
    more = timed_out = False
    deadline = time.monotonic() + params.timeout
    entries = iter_tree(root, hidden=params.hidden, gitignore=params.gitignore, check=ctx.check_cancelled)
    for i, entry in enumerate(entries):
        if i % 512 == 0 and time.monotonic() > deadline:
            timed_out = True
            break
        is_dir = entry.kind == "dir"
        if dirs_only and not is_dir:
            continue
        subject = entry.rel if on_path else entry.rel.rsplit("/", 1)[-1]
        if rx.match(subject):
            if len(found) >= params.limit:
                more = True
                break
            found.append(display_path(entry.path, ctx.cwd) + ("/" if is_dir else ""))
    text = "\n".join(found) if found else f"No files found matching {params.pattern!r}"
    if more:
        text += f"\n\n[Showing the first {params.limit} results. Use a more specific pattern or path.]"
    if timed_out:
        text += f"\n\n[Search stopped after {params.timeout:g} s; results are partial. Narrow the path.]"
    return ToolResult.text(text, {"count": len(found), "truncated": more or timed_out})


async def run(params: Params, ctx: ToolContext) -> ToolResult:
    if not params.pattern.strip():
        raise ToolError("pattern must not be empty")
    return await ctx.run_blocking(lambda: _find(params, ctx), label="Find")
