"""find: glob search for paths, .gitignore-aware, pruning .git and node_modules; archives list their members.

The walk runs in a worker thread (``ctx.run_blocking``) that checks for an abort at every
entry; glob regexes are linear (see ``_gitignore``), so one match never holds the GIL long.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from atomic_host.contract.tools import ToolContext, ToolError, ToolResult
from builtin_plugins.tools._common import display_name, display_path, resolve_path

TIME_BUDGET_SECONDS = 5.0
_GLOB_CHARS = re.compile(r"[*?\[]")


class Params(BaseModel):
    pattern: str | None = Field(
        None,
        description="Glob pattern. Without '/' it matches file names at any depth; with '/' it matches "
        "the path relative to the search directory ('**' spans directories). Optional when paths are globs.",
    )
    path: str | None = Field(None, description="Directory (or archive) to search in (default: working directory)")
    paths: list[str] | None = Field(
        None,
        description="Several directories, archives (their members are listed) or globs such as 'src/**/*.py' "
        "to search, instead of path",
    )
    limit: int = Field(200, ge=1, le=1000, description="Maximum number of results (default 200, max 1000)")
    skip: int = Field(0, ge=0, description="Number of results to skip (for paging)")
    case: Literal["sensitive", "insensitive", "smart"] = Field(
        "sensitive", description="Case matching of the pattern; smart: insensitive unless it has an upper-case letter"
    )
    hidden: bool = Field(True, description="Include hidden (dot) files and directories")
    gitignore: bool = Field(True, description="Skip paths ignored by .gitignore (false: list them too)")
    timeout: float = Field(
        TIME_BUDGET_SECONDS, ge=0.5, le=60, description="Stop after this many seconds with partial results"
    )


def compile_glob(pattern: str, ignore_case: bool = False) -> tuple[re.Pattern[str], bool]:
    """Regex for ``pattern`` and whether it matches the whole relative path (vs the name)."""
    from builtin_plugins.tools._gitignore import compile_glob as compile_tool_glob

    rx, on_path = compile_tool_glob(pattern)
    return (re.compile(rx.pattern, rx.flags | re.IGNORECASE) if ignore_case else rx), on_path


def split_glob(text: str) -> tuple[str, str | None]:
    """``src/**/*.py`` → (``src``, ``**/*.py``): the directories before the first glob segment."""
    parts = text.split("/")
    for i, part in enumerate(parts):
        if _GLOB_CHARS.search(part):
            base = "/".join(parts[:i]) or ("/" if text.startswith("/") else ".")
            return base, "/".join(parts[i:])
    return text, None


def _searches(params: Params, cwd: str) -> list[tuple[Path, str]]:
    """``(root, glob)`` pairs: each root (a directory or archive) with the pattern to match in it."""
    out = []
    for given in params.paths or [params.path or "."]:
        root = resolve_path(given, cwd)
        pattern = params.pattern
        if not root.exists():
            base, glob = split_glob(given)
            if glob is None:
                raise ToolError(f"Directory not found: {display_path(root, cwd)}")
            root, pattern = resolve_path(base, cwd), glob
            if not root.is_dir():
                raise ToolError(f"Directory not found: {display_path(root, cwd)}")
        if not pattern:
            pattern = "*"
        out.append((root, pattern))
    return out


def _members(root: Path, ctx: ToolContext, deadline: float) -> Iterator[tuple[str, bool]]:
    from builtin_plugins.tools.sources.archives import archive_kind, iter_members
    from builtin_plugins.tools.sources.limits import Budget, SourceError

    budget = Budget(display_path(root, ctx.cwd), max(0.1, deadline - time.monotonic()), ctx.check_cancelled)
    try:
        for member in iter_members(str(root), archive_kind(root.name) or "zip", budget):
            yield member.name, member.is_dir
    except SourceError as e:
        raise ToolError(str(e)) from e


def _find(params: Params, ctx: ToolContext) -> ToolResult:
    from builtin_plugins.tools._gitignore import iter_tree
    from builtin_plugins.tools.sources.archives import archive_kind

    found: list[str] = []
    matched = 0
    more = timed_out = False
    deadline = time.monotonic() + params.timeout
    for root, pattern in _searches(params, ctx.cwd):
        dirs_only = pattern.rstrip().endswith("/")
        ignore_case = params.case == "insensitive" or (params.case == "smart" and not any(c.isupper() for c in pattern))
        rx, on_path = compile_glob(pattern.rstrip().rstrip("/") if dirs_only else pattern, ignore_case)
        shown_root = display_path(root, ctx.cwd)
        if root.is_file():
            if not archive_kind(root.name):
                raise ToolError(f"Not a directory or archive: {shown_root}")
            entries: Iterator[tuple[str, bool, str]] = (
                (name, is_dir, f"{shown_root}:{display_name(name)}") for name, is_dir in _members(root, ctx, deadline)
            )
        elif root.is_dir():
            walk = iter_tree(root, hidden=params.hidden, gitignore=params.gitignore, check=ctx.check_cancelled)
            entries = ((e.rel, e.kind == "dir", display_path(e.path, ctx.cwd)) for e in walk)
        else:
            raise ToolError(f"Directory not found: {shown_root}")
        for i, (rel, is_dir, shown) in enumerate(entries):
            if i % 512 == 0 and time.monotonic() > deadline:
                timed_out = True
                break
            if dirs_only and not is_dir:
                continue
            subject = rel if on_path else rel.rsplit("/", 1)[-1]
            if rx.match(subject):
                matched += 1
                if matched <= params.skip:
                    continue
                if len(found) >= params.limit:
                    more = True
                    break
                found.append(shown + ("/" if is_dir else ""))
        if more or timed_out:
            break
    what = params.pattern or ", ".join(params.paths or [])
    text = "\n".join(found) if found else f"No files found matching {what!r}"
    if not found and params.skip:
        text += f" after skipping {params.skip}"
    if more:
        nxt = params.skip + params.limit
        shown = f"the first {params.limit}" if not params.skip else f"{params.skip + 1}-{nxt} of the"
        text += f"\n\n[Showing {shown} results. Continue with skip={nxt}, or use a more specific pattern or path.]"
    if timed_out:
        text += f"\n\n[Search stopped after {params.timeout:g} s; results are partial. Narrow the path.]"
    return ToolResult.text(text, {"count": len(found), "truncated": more or timed_out})


async def run(params: Params, ctx: ToolContext) -> ToolResult:
    if params.pattern is not None and not params.pattern.strip():
        raise ToolError("pattern must not be empty")
    if params.pattern is None and not params.paths:
        raise ToolError("give a pattern (or paths that are globs, e.g. ['src/**/*.py'])")
    return await ctx.run_blocking(lambda: _find(params, ctx), label="Find")
