"""Plugin code that blocks the event loop: a synchronous tool that sleeps, and an ``on_event``
hook that sleeps on an event type chosen with ``/runf_nap <event type>``."""

import time

from atomic_host import SlashCommand, Tool, ToolResult, hookimpl

NAP_SECONDS = 1.5
_nap_on: set[str] = set()


def sleepy_tool(params, ctx) -> ToolResult:
    time.sleep(NAP_SECONDS)
    return ToolResult.text("slept")


def _nap(args: str, api) -> None:
    _nap_on.add(args.strip())


@hookimpl
def register_tools(register) -> None:
    register(Tool("runf_sleepy", "Sleeps on the event loop.", {"type": "object", "properties": {}}, sleepy_tool))


@hookimpl
def register_commands(register) -> None:
    register(SlashCommand("runf_nap", _nap, description="block the loop on the next event of a type"))


@hookimpl
def on_event(event, api) -> None:
    if event["type"] in _nap_on:
        _nap_on.discard(event["type"])
        time.sleep(NAP_SECONDS)
