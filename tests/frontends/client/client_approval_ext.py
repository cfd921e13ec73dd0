"""A stand-in for the approvals plugin: a ``tool_call`` gate that asks exactly its dialog (a
``select`` carrying ``approval``, options Allow once / Allow for this session / Deny; a denial's
``message`` is what the model reads) before every tool but ``read``, and remembers "Allow for this
session" per tool. ``/askname`` asks an ``input`` and notifies the answer (another dialog)."""

from atomic_host import ToolCallDecision, hookimpl
from atomic_host.contract.commands import SlashCommand

OPTIONS = ["Allow once", "Allow for this session", "Deny"]
REMEMBERED: set[str] = set()


async def _ask(api, event) -> dict:
    approval = {"toolName": event.tool_name, "toolCallId": event.tool_call_id, "args": dict(event.input)}
    if event.tool_name in ("edit", "write"):
        approval["diff"] = f"--- a/{event.input.get('path')}\n+++ b/{event.input.get('path')}\n"
    # the RPC UI's own dialog call, with the extra key the approvals plugin's requests carry
    answer = await api.ui._dialog("select", None, title=f"Allow {event.tool_name}?", options=OPTIONS, approval=approval)
    return answer or {"cancelled": True}


@hookimpl
async def tool_call(event, api):
    if event.tool_name == "read" or event.tool_name in REMEMBERED:
        return None
    answer = await _ask(api, event)
    value = answer.get("value")
    if value == OPTIONS[1]:
        REMEMBERED.add(event.tool_name)
    if value in OPTIONS[:2]:
        return None
    return ToolCallDecision(block=True, reason=answer.get("message") or "The user rejected this tool call")


async def _askname(args: str, api) -> None:
    name = await api.ui.input("Your name?", "name")
    api.ui.notify(f"hello {name}")


@hookimpl
def register_commands(register) -> None:
    register(SlashCommand("askname", _askname, description="ask a name, then greet"))
