"""kill: list background processes started by bash, or stop one (its whole process group)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from atomic_host.contract.tools import ToolContext, ToolError, ToolResult
from builtin_plugins.tools import _background


class Params(BaseModel):
    id: str | None = Field(None, description="Background process id such as 'bg-1'; omit to list them")


async def run(params: Params, ctx: ToolContext) -> ToolResult:
    reg = _background.registry(ctx.state)
    if not params.id:
        if not reg.procs:
            return ToolResult.text("No background processes.", {"processes": []})
        rows = [bp.describe() for bp in reg.procs.values()]
        info = [
            {"id": bp.id, "pid": bp.pid, "status": bp.status(), "command": bp.command, "logPath": bp.log_path}
            for bp in reg.procs.values()
        ]
        return ToolResult.text("\n".join(rows), {"processes": info})
    bp = reg.procs.get(params.id.strip())
    if bp is None:
        known = ", ".join(reg.procs) or "none"
        raise ToolError(f"No background process {params.id!r} (known: {known})")
    was = bp.status()
    await _background.stop(bp)
    del reg.procs[bp.id]
    if was == "running":
        text = f"Stopped {bp.id} (pid {bp.pid}). Log: {bp.log_path}"
    else:
        text = f"{bp.id} had already {was}. Log: {bp.log_path}"
    return ToolResult.text(text, {"id": bp.id, "pid": bp.pid, "previousStatus": was, "logPath": bp.log_path})
