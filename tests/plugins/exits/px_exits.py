"""An extension that ends its own code the way ``PX_HOW`` says (``sys.exit``, ``SystemExit``,
``KeyboardInterrupt``, ``GeneratorExit``, ``os._exit``: ``_px_how.end_it``) where the client asks:

- ``PX_AT`` (comma-separated, read at start): ``host_start``, ``session_start``;
- the prompt ``fail:input`` (the input hook), ``fail:on_event`` (on_event, at agent_start);
- a ``px_tool`` call with ``{"fail": "tool"}`` (its handler) or ``{"fail": "gate"}`` (the
  tool_call gate, async);
- ``/px`` (a slash command), ``get_command_completions`` of ``px``;
- the model ``pxexit/boom`` (a provider whose stream ends the same way after one delta).
"""

import os

from _px_how import end_it

from atomic_host import ApiImpl, ProviderInfo, SlashCommand, Tool, ToolResult, hookimpl

AT = set(os.environ.get("PX_AT", "").split(","))
_armed = {"on_event": False}


async def _tool(params, ctx) -> ToolResult:
    if params.get("fail") == "tool":
        end_it()
    return ToolResult.text("px_tool ran")


PARAMS = {"type": "object", "properties": {"fail": {"type": "string"}}}


@hookimpl
def register_tools(register) -> None:
    register(Tool("px_tool", "A tool that may end its own code.", PARAMS, _tool))


def _command(args: str, api) -> None:
    end_it()


def _completions(prefix: str):
    end_it()


@hookimpl
def register_commands(register) -> None:
    register(SlashCommand("px", _command, description="ends its code", completions=_completions))


async def _stream(model, context, options):
    from atomic_host.kit.llm.stream import AssistantStream

    out = AssistantStream(model)
    yield out.start()
    index, event = out.text_start()
    yield event
    yield out.text_delta(index, "about to ")
    end_it()


@hookimpl
def register_providers(register) -> None:
    register(ApiImpl("px-exit", _stream))
    register(
        ProviderInfo(
            id="pxexit",
            name="Exiting provider",
            api="px-exit",
            always_authenticated=True,
            models=[{"id": "boom", "name": "Boom", "contextWindow": 8000, "maxTokens": 100,
                     "input": ["text"], "reasoning": False}],
        )
    )


@hookimpl
def host_start(api) -> None:
    if "host_start" in AT:
        end_it()


@hookimpl
def session_start(event, api) -> None:
    if "session_start" in AT:
        end_it()


@hookimpl
async def tool_call(event, api):
    if event.tool_name == "px_tool" and event.input.get("fail") == "gate":
        end_it()
    return None


@hookimpl
def input(event, api):
    if event.text == "fail:input":
        end_it()
    _armed["on_event"] = event.text == "fail:on_event"
    return None


@hookimpl
def on_event(event, api) -> None:
    if _armed["on_event"] and event["type"] == "agent_start":
        _armed["on_event"] = False
        end_it()
