"""search: regex search over file contents, .gitignore-aware, paged by files.

The host validates the arguments; the search itself (``_search_core``) runs in a worker
process that an abort kills, so neither a big tree nor a pattern that backtracks for minutes
can hold up the event loop.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from atomic_host.contract.tools import ToolContext, ToolError, ToolResult
from builtin_plugins.tools._common import display_path, resolve_path
from builtin_plugins.tools._search_core import compile_pattern
from builtin_plugins.tools._worker import run_in_worker


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
    gitignore: bool = Field(True, description="Skip files ignored by .gitignore (false: search them too)")


async def run(params: Params, ctx: ToolContext) -> ToolResult:
    if not params.pattern.strip():
        raise ToolError("pattern must not be empty or whitespace only")
    try:
        compile_pattern(params.pattern, params.ignoreCase)
    except re.error as e:
        raise ToolError(f"Invalid regular expression: {e}") from e
    root = resolve_path(params.path or ".", ctx.cwd)
    if not root.exists():
        raise ToolError(f"Path not found: {display_path(root, ctx.cwd)}")
    before, after = (1, 3) if params.context is None else (params.context, params.context)
    request = {
        "pattern": params.pattern,
        "ignoreCase": params.ignoreCase,
        "root": str(root),
        "cwd": ctx.cwd,
        "glob": params.glob,
        "before": before,
        "after": after,
        "limit": params.limit,
        "skip": params.skip,
        "gitignore": params.gitignore,
    }
    page = await run_in_worker(ctx, "builtin_plugins.tools._search_core", "search", request, label="Search")
    return ToolResult.text(page["text"], page["details"])
