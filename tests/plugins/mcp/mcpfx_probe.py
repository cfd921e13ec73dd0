"""Extension for tests/plugins/mcp (loaded with ``-e``): a tool that reports which modules the host has
imported, so a test can see, in the real subprocess, what startup pulled in."""

from __future__ import annotations

import json
import sys

from atomic_host import Tool, ToolResult, hookimpl

WATCHED = ("mcp", "mcp_types", "mcp.client", "builtin_plugins.mcp.client", "builtin_plugins.mcp.hub", "uvicorn")


async def probe(params: dict, ctx: object) -> ToolResult:
    return ToolResult.text(json.dumps({name: name in sys.modules for name in WATCHED}))


@hookimpl
def register_tools(register):
    register(
        Tool(name="probe_modules", description="Which modules are imported.", params={"type": "object"}, handler=probe)
    )
