"""Plugin code that never returns: a tool, a tool that also swallows cancellation, and a provider
whose stream hangs without looking at the abort signal."""

import asyncio

from atomic_host import ApiImpl, ProviderInfo, Tool, ToolResult, hookimpl


async def _hang(params, ctx) -> ToolResult:
    await asyncio.Event().wait()
    return ToolResult.text("unreachable")


async def _stubborn(params, ctx) -> ToolResult:
    while True:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            continue  # a badly written tool: it never lets go


async def _stuck_stream(model, context, options):
    await asyncio.Event().wait()
    yield {}


@hookimpl
def register_tools(register) -> None:
    empty = {"type": "object", "properties": {}}
    register(Tool("runf_hang", "Never returns.", empty, _hang))
    register(Tool("runf_stubborn", "Never returns, even when cancelled.", empty, _stubborn))


@hookimpl
def register_providers(register) -> None:
    register(ApiImpl("runf-stuck", _stuck_stream))
    register(
        ProviderInfo(
            id="runfstuck",
            name="Stuck provider",
            api="runf-stuck",
            always_authenticated=True,
            models=[{"id": "stuck-1", "name": "Stuck", "contextWindow": 8000, "maxTokens": 100,
                     "input": ["text"], "reasoning": False}],
        )
    )
