"""A healthy plugin: one slash command (``/hello``) and one tool (``hello_tool``)."""

from atomic_host import hookimpl
from atomic_host.contract.commands import SlashCommand
from atomic_host.contract.tools import Tool, ToolResult


def _hello(args: str, api) -> None:
    api.append_entry("hello", {"args": args})


async def _hello_tool(params, ctx) -> ToolResult:
    return ToolResult.text("hello from tool")


@hookimpl
def register_commands(register) -> None:
    register(SlashCommand("hello", _hello, description="say hello"))


@hookimpl
def register_tools(register) -> None:
    register(Tool("hello_tool", "Say hello.", {"type": "object", "properties": {}}, _hello_tool))
