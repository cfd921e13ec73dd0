"""Executing one assistant message's tool calls: in parallel, gated by hooks, results in source order."""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import TYPE_CHECKING, Any

from atomic_host.agent.oversized import persist_if_oversized
from atomic_host.contract.events import ToolCallEvent, ToolResultEvent
from atomic_host.contract.results import ToolCallDecision
from atomic_host.contract.tools import ToolContext, ToolError, ToolResult

if TYPE_CHECKING:
    from atomic_host.engine.agent_session import AgentSession


def _validation_message(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        parts = []
        for err in errors():
            loc = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
            parts.append(f"{loc}: {err.get('msg')}")
        return "Invalid arguments: " + "; ".join(parts)
    return f"Invalid arguments: {exc}"


async def call_tool(
    agent: AgentSession,
    name: str,
    args: dict[str, Any],
    call_id: str,
    signal: asyncio.Event,
    on_update: Any = None,
) -> ToolResult:
    """Run one tool call through the hooks; every failure becomes an error result."""
    rt = agent.rt
    tool = rt.tools.get(name)
    if tool is None or tool not in rt.tools.for_model():
        return ToolResult.text(f"Tool {name} not found", is_error=True)
    event = ToolCallEvent(tool_name=name, tool_call_id=call_id, input=dict(args))
    for _plugin, decision in await rt.plugins.acall_each("tool_call", event=event, api=rt.api):
        if isinstance(decision, ToolCallDecision) and decision.block:
            return ToolResult.text(decision.reason or "Tool execution was blocked", is_error=True)
        if isinstance(decision, dict) and decision.get("block"):
            return ToolResult.text(decision.get("reason") or "Tool execution was blocked", is_error=True)
    try:
        model = tool.params_model()
        params: Any = event.input if model is None else model.model_validate(event.input)
    except Exception as exc:
        return ToolResult.text(_validation_message(exc), is_error=True)
    ctx = ToolContext(
        cwd=agent.cwd,
        session_id=agent.session.id,
        tool_call_id=call_id,
        signal=signal,
        on_update=on_update or (lambda _r: None),
        ui=rt.ui,
        temp_dir=agent.temp_dir,
        call_tool=lambda n, a: _nested_call(agent, n, a, signal),
        list_tools=rt.tools.callable_from_code,
        deferred_tools=rt.tools.deferred,
        load_tools=rt.tools.load,
        settings=rt.settings.data,
        state=rt.tool_state.setdefault(tool.plugin, {}),
    )
    try:
        raw = tool.get_handler()(params, ctx)
        if inspect.isawaitable(raw):  # handlers may be sync or async
            raw = await raw
        result = ToolResult.text(raw) if isinstance(raw, str) else raw
        if not isinstance(result, ToolResult):
            result = ToolResult.text(str(result))
    except ToolError as exc:
        result = ToolResult.text(str(exc), is_error=True)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        result = ToolResult.text(str(exc) or type(exc).__name__, is_error=True)
    patch_event = ToolResultEvent(tool_name=name, tool_call_id=call_id, input=event.input, result=result)
    for _plugin, patch in await rt.plugins.acall_each("tool_result", event=patch_event, api=rt.api):
        if isinstance(patch, ToolResult):
            result = patch
        elif isinstance(patch, dict):
            result = ToolResult(
                patch.get("content", result.content),
                patch.get("details", result.details),
                bool(patch.get("is_error", patch.get("isError", result.is_error))),
            )
    return result


async def _nested_call(
    agent: AgentSession, name: str, args: dict[str, Any], signal: asyncio.Event
) -> ToolResult:
    tool = agent.rt.tools.get(name)
    if tool is not None and tool.exposure == "model-only":
        return ToolResult.text(f"Tool {name} cannot be called from code", is_error=True)
    return await call_tool(agent, name, args, f"nested-{time.monotonic_ns()}", signal)


async def execute_tool_calls(agent: AgentSession, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Emit start events in source order, run all calls concurrently, return toolResult messages
    in source order (their message events are emitted by the caller)."""
    emit = agent.emit
    for call in calls:
        emit(
            {
                "type": "tool_execution_start",
                "toolCallId": call["id"],
                "toolName": call["name"],
                "args": call.get("arguments", {}),
            }
        )

    async def run_one(call: dict[str, Any]) -> dict[str, Any]:
        name, call_id, args = call["name"], call["id"], call.get("arguments") or {}

        def on_update(partial: ToolResult) -> None:
            emit(
                {
                    "type": "tool_execution_update",
                    "toolCallId": call_id,
                    "toolName": name,
                    "args": args,
                    "partialResult": partial.to_wire(),
                }
            )

        result = await call_tool(agent, name, args, call_id, agent.abort_signal, on_update)
        result = persist_if_oversized(agent, agent.rt.tools.get(name), call_id, result)
        emit(
            {
                "type": "tool_execution_end",
                "toolCallId": call_id,
                "toolName": name,
                "result": result.to_wire(),
                "isError": result.is_error,
            }
        )
        message: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": result.content,
            "isError": result.is_error,
            "timestamp": int(time.time() * 1000),
        }
        if result.details is not None:
            message["details"] = result.details
        return message

    return list(await asyncio.gather(*(run_one(c) for c in calls)))
