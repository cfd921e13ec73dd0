"""A local extension (loaded with ``-e``) used by the tools-through-RPC tests.

It registers a plain tool, a deferred tool, a tool with a huge result, a tool and a command
that drive the extension UI, and a ``tool_call`` hook that logs every call it sees (to the
file named by ``TOOLSRPC_LOG``) and blocks ``read`` of any path containing "forbidden".
"""

from __future__ import annotations

import json
import os
from typing import Any

from pydantic import BaseModel

from atomic_host import hookimpl
from atomic_host.contract.commands import SlashCommand
from atomic_host.contract.results import ToolCallDecision
from atomic_host.contract.tools import Tool, ToolContext

BIG_SIZE = 120_000


class EchoParams(BaseModel):
    text: str


class CityParams(BaseModel):
    city: str


class NoParams(BaseModel):
    pass


async def echo(p: EchoParams, ctx: ToolContext) -> str:
    return f"echo: {p.text}"


async def weather(p: CityParams, ctx: ToolContext) -> str:
    return f"Sunny in {p.city}"


async def big(p: NoParams, ctx: ToolContext) -> str:
    # Distinct lines so a preview is easy to check; multi-byte chars make chars != bytes.
    lines = [f"{i:06d} é" for i in range(BIG_SIZE // 9 + 1)]
    return "\n".join(lines)[:BIG_SIZE]


async def drive_ui(ui: Any) -> dict[str, Any]:
    """Every dialog once (answers come from the client or the timeout), then every fire-and-forget call."""
    answers = {
        "select": await ui.select("Pick a color", ["red", "green"]),
        "confirm": await ui.confirm("Proceed?", "This changes things"),
        "input": await ui.input("Your name", "name here"),
        "editor": await ui.editor("Edit text", "prefilled"),
        "timed_select": await ui.select("Nobody answers", ["a", "b"], timeout=0.3),
        "timed_confirm": await ui.confirm("Nobody answers either", timeout=0.3),
    }
    ui.notify("all done", "warning")
    ui.set_status("probe", "busy")
    ui.set_widget("probe", ["line 1", "line 2"], "belowEditor")
    ui.set_title("Probe title")
    ui.set_editor_text("draft text")
    return answers


async def ui_probe(p: NoParams, ctx: ToolContext) -> str:
    return json.dumps(await drive_ui(ctx.ui))


async def ui_command(args: str, api: Any) -> None:
    answers = await drive_ui(api.ui)
    api.append_entry("ui-answers", answers)


@hookimpl
def register_tools(register: Any) -> None:
    register(Tool("ext_echo", "Echo the text back.", EchoParams, echo, source="extension ext_toolsrpc"))
    register(
        Tool(
            "weather_lookup",
            "Look up the current weather forecast for a city.",
            CityParams,
            weather,
            deferred=True,
        )
    )
    register(Tool("big_result", "Return a very large text.", NoParams, big))
    register(Tool("ui_probe", "Ask the user things through the UI.", NoParams, ui_probe))


@hookimpl
def register_commands(register: Any) -> None:
    register(SlashCommand("ui-demo", ui_command, description="Drive every UI method"))


@hookimpl
def tool_call(event: Any, api: Any) -> ToolCallDecision | None:
    log = os.environ.get("TOOLSRPC_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps({"tool": event.tool_name, "id": event.tool_call_id, "input": event.input}) + "\n")
    if event.tool_name == "read" and "forbidden" in str(event.input.get("path", "")):
        return ToolCallDecision(block=True, reason="reading forbidden files is blocked by ext_toolsrpc")
    return None
