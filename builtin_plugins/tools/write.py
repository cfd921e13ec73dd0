"""write: create or overwrite a file atomically (temp file + rename), creating parent directories.

Runs in a worker thread; an abort before the rename leaves the file as it was.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from atomic_host.contract.tools import ToolContext, ToolError, ToolResult
from atomic_host.kit.fsio import atomic_write
from builtin_plugins.tools._common import count_lines, display_path, resolve_path


class Params(BaseModel):
    path: str = Field(description="File to write, relative to the working directory (~ allowed)")
    content: str = Field(description="The complete new file content")


async def run(params: Params, ctx: ToolContext) -> ToolResult:
    return await ctx.run_blocking(lambda: _write(params, ctx), label="Write")


def _write(params: Params, ctx: ToolContext) -> ToolResult:
    path = resolve_path(params.path, ctx.cwd)
    rel = display_path(path, ctx.cwd)
    if path.is_dir():
        raise ToolError(f"{rel} is a directory")
    existed = path.exists()
    data = params.content.encode("utf-8")
    ctx.check_cancelled()  # last point where an abort leaves the file untouched
    try:
        atomic_write(path, data, None)
    except OSError as e:
        raise ToolError(f"Cannot write {rel}: {e.strerror or e}") from e
    lines = count_lines(params.content)
    verb = "Overwrote" if existed else "Created"
    return ToolResult.text(
        f"{verb} {rel} ({len(data)} bytes, {lines} lines)",
        {"path": str(path), "bytes": len(data), "lines": lines, "created": not existed},
    )
