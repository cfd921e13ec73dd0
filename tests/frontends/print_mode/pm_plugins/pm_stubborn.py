"""A tool that ignores the abort signal for 20 s (a second Ctrl-C must not wait for it)."""

import asyncio

from atomic_host import hookimpl
from atomic_host.contract.tools import Tool, ToolResult


async def _stubborn(params, ctx) -> ToolResult:
    ctx.on_update(ToolResult.text("started"))
    for _ in range(200):
        try:
            await asyncio.sleep(0.1)
        except asyncio.CancelledError:
            pass
    return ToolResult.text("finished")


@hookimpl
def register_tools(register):
    register(Tool("stubborn", "Ignores abort.", {"type": "object", "properties": {}}, _stubborn))
