"""A permission gate: ``tool_call`` asks the user (``api.ui.confirm``) before ``runf_guarded`` runs."""

from atomic_host import Tool, ToolCallDecision, ToolResult, hookimpl


async def _guarded(params, ctx) -> ToolResult:
    return ToolResult.text("guarded tool ran")


@hookimpl
def register_tools(register) -> None:
    register(Tool("runf_guarded", "Runs if allowed.", {"type": "object", "properties": {}}, _guarded))


@hookimpl
async def tool_call(event, api):
    if event.tool_name == "runf_guarded" and not await api.ui.confirm("Allow?", "runf_guarded wants to run"):
        return ToolCallDecision(block=True, reason="the user said no")
    return None
