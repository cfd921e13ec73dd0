"""Async hooks that never return: ``tool_call`` for the ``runf_ping`` tool, ``input`` for text
starting with "hang", and an ``input`` hook that also swallows its cancellation ("stubborn")."""

import asyncio

from atomic_host import Tool, ToolResult, hookimpl


async def _ping(params, ctx) -> ToolResult:
    return ToolResult.text("pong")


@hookimpl
def register_tools(register) -> None:
    register(Tool("runf_ping", "Answers pong.", {"type": "object", "properties": {}}, _ping))


@hookimpl
async def tool_call(event, api):
    if event.tool_name == "runf_ping":
        await asyncio.Event().wait()
    return None


@hookimpl
async def input(event, api):
    if event.text.startswith("hang"):
        await asyncio.Event().wait()
    if event.text.startswith("stubborn"):
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                continue
    return None
