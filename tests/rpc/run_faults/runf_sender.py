"""Sends custom and user messages at moments a test chooses.

- ``/runf_send {json}``: ``api.send_message`` now (``kind: "user"`` → ``api.send_user_message``);
- ``/runf_arm <event type> {json}``: the same, once, from ``on_event`` when that event is next seen;
- the ``runf_gate`` tool waits until ``/runf_release`` (or an abort), so a test can act mid-run.

What each send returned is reported with ``api.ui.notify("runf: ...")``.
"""

import asyncio
import json

from atomic_host import SlashCommand, Tool, ToolResult, hookimpl

_armed: list[tuple[str, dict]] = []
_tasks: set[asyncio.Future] = set()  # keeps scheduled user prompts alive until they finish
_gate: asyncio.Event | None = None


def _gate_event() -> asyncio.Event:
    global _gate
    if _gate is None:
        _gate = asyncio.Event()
    return _gate


def _send(api, spec: dict):
    spec = dict(spec)
    if spec.pop("kind", "custom") == "user":
        return api.send_user_message(spec["text"], deliver_as=spec.get("deliver_as"))
    return api.send_message(spec.pop("custom_type", "runf"), spec.pop("content"), **spec)


async def _send_command(args: str, api) -> None:
    result = await _send(api, json.loads(args))
    api.ui.notify(f"runf: sent {result}")


def _arm(args: str, api) -> None:
    event_type, _, spec = args.partition(" ")
    _armed.append((event_type, json.loads(spec)))


def _release(args: str, api) -> None:
    _gate_event().set()


async def _gate_tool(params, ctx) -> ToolResult:
    gate = _gate_event()
    aborted = asyncio.ensure_future(ctx.signal.wait())
    opened = asyncio.ensure_future(gate.wait())
    await asyncio.wait({aborted, opened}, return_when=asyncio.FIRST_COMPLETED)
    aborted.cancel()
    opened.cancel()
    if not gate.is_set():
        return ToolResult.text("gate aborted", is_error=True)
    gate.clear()
    return ToolResult.text("gate opened")


@hookimpl
def register_commands(register) -> None:
    register(SlashCommand("runf_send", _send_command, description="send a message now"))
    register(SlashCommand("runf_arm", _arm, description="send a message on the next event of a type"))
    register(SlashCommand("runf_release", _release, description="open the runf_gate tool"))


@hookimpl
def register_tools(register) -> None:
    register(Tool("runf_gate", "Wait for the gate.", {"type": "object", "properties": {}}, _gate_tool))


@hookimpl
def on_event(event, api) -> None:
    for i, (event_type, spec) in enumerate(_armed):
        if event["type"] == event_type:
            del _armed[i]
            result = _send(api, spec)  # send_message acts at once: no await needed in a sync hook
            if spec.get("kind") == "user":
                task = asyncio.ensure_future(result)
                _tasks.add(task)
                task.add_done_callback(_tasks.discard)
            return
