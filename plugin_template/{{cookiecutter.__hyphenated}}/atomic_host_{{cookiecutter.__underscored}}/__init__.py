"""{{ cookiecutter.description }}"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from atomic_host import SlashCommand, Tool, ToolContext, ToolResult, hookimpl


class EchoParams(BaseModel):
    text: str = Field(description="Text to echo back")
    times: int = Field(1, ge=1, le=10, description="How many times to repeat it")


async def echo(params: EchoParams, ctx: ToolContext) -> ToolResult:
    """The tool handler: gets validated parameters and the per-call context."""
    text = " ".join([params.text] * params.times)
    return ToolResult.text(text, details={"times": params.times})


async def command(args: str, api: Any) -> None:
    """``/{{ cookiecutter.__hyphenated }} ARGS``: record ARGS in the session and tell the user."""
    api.append_entry("{{ cookiecutter.__underscored }}", {"args": args})
    api.ui.notify(f"{{ cookiecutter.__hyphenated }}: {args}")


@hookimpl
def register_tools(register):
    register(
        Tool(
            name="{{ cookiecutter.__underscored }}_echo",
            description="Echo the given text back, optionally repeated.",
            params=EchoParams,
            handler=echo,
        )
    )


@hookimpl
def register_commands(register):
    register(
        SlashCommand(
            name="{{ cookiecutter.__hyphenated }}",
            handler=command,
            description="{{ cookiecutter.description }}",
        )
    )
