"""A fail-closed gate in a plugin whose ``register_tools`` raises: the plugin fails, and while it is
failed its gate blocks every tool call."""

from atomic_host import ToolCallDecision, fail_closed, hookimpl


@hookimpl
@fail_closed
def tool_call(event, api):
    return ToolCallDecision(block=True, reason="nothing runs here") if event.tool_name == "never" else None


@hookimpl
def register_tools(register) -> None:
    raise ValueError("no tools today")
