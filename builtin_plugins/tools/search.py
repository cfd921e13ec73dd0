"""search: regex search over file contents, .gitignore-aware, paged by files.

The host validates the arguments; the search itself (``_search_core``) runs in a worker
process that an abort kills, so neither a big tree nor a pattern that backtracks for minutes
can hold up the event loop.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from atomic_host.contract.tools import ToolContext, ToolError, ToolResult
from builtin_plugins.tools._common import display_path, resolve_path


class Params(BaseModel):
    pattern: str = Field(description="Regular expression to search for")
    path: str | None = Field(None, description="File, directory or archive to search (default: working directory)")
    paths: str | list[str] | None = Field(
        None,
        description="Several files, directories or archives (.zip, .tar.gz, ...: their members are searched) "
        "to search, instead of path",
    )
    glob: str | None = Field(
        None,
        description="Only search files whose name (or relative path, if it has '/') matches this glob, e.g. '*.py'",
    )
    ignoreCase: bool = Field(False, description="Case-insensitive matching")
    i: bool | None = Field(None, description="Same as ignoreCase")
    case: Literal["sensitive", "insensitive", "smart"] | None = Field(
        None, description="Case matching; smart: insensitive unless the pattern has an upper-case letter"
    )
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


def ignores_case(pattern: str, case: str | None, ignore_case: bool) -> bool:
    """``case`` when given (smart: insensitive unless ``pattern`` has an upper-case letter), else the flag."""
    if case == "smart":
        return not any(c.isupper() for c in pattern)
    if case is not None:
        return case == "insensitive"
    return ignore_case


def search_roots(path: str | None, paths: str | list[str] | None, cwd: str) -> list[Path]:
    """The resolved roots: ``paths`` (one string or several), else ``path``, else the working directory."""
    given = [paths] if isinstance(paths, str) else list(paths or [])
    if path:
        given.insert(0, path)
    return [resolve_path(p, cwd) for p in given] or [resolve_path(".", cwd)]


async def run(params: Params, ctx: ToolContext) -> ToolResult:
    from builtin_plugins.tools._search_core import compile_pattern
    from builtin_plugins.tools._worker import run_in_worker

    if not params.pattern.strip():
        raise ToolError("pattern must not be empty or whitespace only")
    ignore_case = ignores_case(params.pattern, params.case, params.ignoreCase or bool(params.i))
    try:
        compile_pattern(params.pattern, ignore_case)
    except re.error as e:
        raise ToolError(f"Invalid regular expression: {e}") from e
    roots = search_roots(params.path, params.paths, ctx.cwd)
    for root in roots:
        if not root.exists():
            raise ToolError(f"Path not found: {display_path(root, ctx.cwd)}")
    before, after = (1, 3) if params.context is None else (params.context, params.context)
    request = {
        "pattern": params.pattern,
        "ignoreCase": ignore_case,
        "roots": [str(root) for root in roots],
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
