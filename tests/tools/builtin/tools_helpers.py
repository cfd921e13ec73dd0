"""Helpers for the built-in tool tests (imported by name; pytest puts this directory on sys.path)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from atomic_host.contract.tools import ToolContext, ToolError, ToolResult


def make_ctx(cwd: Path, **kw: Any) -> ToolContext:
    return ToolContext(cwd=str(cwd), session_id="sess-1", tool_call_id="call-1", signal=asyncio.Event(), **kw)


async def call(name: str, ctx: ToolContext, **args: Any) -> ToolResult:
    """Validate ``args`` with the tool's Params model and run it, as the host would."""
    import importlib

    mod = importlib.import_module(f"builtin_plugins.tools.{name}")
    result = await mod.run(mod.Params.model_validate(args), ctx)
    assert isinstance(result, ToolResult)
    return result


async def call_err(name: str, ctx: ToolContext, **args: Any) -> str:
    """Run a tool expected to fail; return the error text (ToolError or is_error result)."""
    try:
        result = await call(name, ctx, **args)
    except ToolError as e:
        return str(e)
    assert result.is_error, result
    return text_of(result)


def text_of(result: ToolResult) -> str:
    return "".join(c.get("text", "") for c in result.content if c["type"] == "text")
