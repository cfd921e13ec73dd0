"""ls: list one directory (directories marked with '/'), dotfiles included; runs in a worker thread."""

from __future__ import annotations

import os

from pydantic import BaseModel, Field

from atomic_host.contract.tools import ToolContext, ToolError, ToolResult
from builtin_plugins.tools._common import display_name, display_path, resolve_path


class Params(BaseModel):
    path: str | None = Field(None, description="Directory to list (default: working directory)")
    limit: int = Field(500, ge=1, description="Maximum number of entries (default 500)")


async def run(params: Params, ctx: ToolContext) -> ToolResult:
    return await ctx.run_blocking(lambda: _ls(params, ctx), label="List")


def _ls(params: Params, ctx: ToolContext) -> ToolResult:
    path = resolve_path(params.path or ".", ctx.cwd)
    rel = display_path(path, ctx.cwd)
    if not path.exists():
        raise ToolError(f"Path not found: {rel}")
    if not path.is_dir():
        raise ToolError(f"Not a directory: {rel}")
    try:
        with os.scandir(path) as it:
            entries = sorted(it, key=lambda e: e.name.lower())
    except PermissionError as e:
        raise ToolError(f"Permission denied: {rel}") from e
    except OSError as e:
        raise ToolError(f"Cannot list {rel}: {e.strerror or e}") from e
    names = []
    for e in entries:
        ctx.check_cancelled()
        try:
            names.append(display_name(e.name) + ("/" if e.is_dir() else ""))
        except OSError:
            names.append(display_name(e.name))
    shown = names[: params.limit]
    text = "\n".join(shown) if shown else "(empty directory)"
    if len(names) > params.limit:
        more = min(len(names), params.limit * 2)
        text += f"\n\n[Showing {params.limit} of {len(names)} entries. Use limit={more} for more.]"
    return ToolResult.text(text, {"path": str(path), "count": len(names), "truncated": len(names) > params.limit})
