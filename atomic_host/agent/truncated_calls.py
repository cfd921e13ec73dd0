"""Tool calls of a reply cut off by the output-token limit: answered with an error, never run.

A ``length`` stop (Anthropic ``max_tokens``, Chat ``length``, Responses ``max_output_tokens``) can
land inside a tool call's arguments, even before its block is closed. The streaming JSON parser
still salvages an object from the half-received text (``{"command": "rm -rf bui``), which may
validate and would do something nobody asked for. So every tool call of such a reply gets an error
result that tells the model to re-issue it, as pi's agent loop does; the run then continues and the
model sees those results.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from atomic_host.contract.tools import ToolResult

if TYPE_CHECKING:
    from atomic_host.agent.ports import RunPorts


def truncated_call_text(name: str) -> str:
    """The error result of a tool call from a reply cut off by the output-token limit."""
    return (
        f'Tool call "{name}" was not executed: the response hit the output token limit, so its arguments '
        "may be truncated. Re-issue the tool call with complete arguments."
    )


def fail_truncated_tool_calls(run: RunPorts, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Emit ``tool_execution_start``/``_end`` (an error) for each call, in source order, and return
    the toolResult messages (the caller emits their message events, as for executed calls)."""
    results: list[dict[str, Any]] = []
    for call in calls:
        call_id, name, args = call["id"], call["name"], call.get("arguments") or {}
        run.emit({"type": "tool_execution_start", "toolCallId": call_id, "toolName": name, "args": args})
        result = ToolResult.text(truncated_call_text(name), is_error=True)
        run.emit(
            {
                "type": "tool_execution_end",
                "toolCallId": call_id,
                "toolName": name,
                "result": result.to_wire(),
                "isError": True,
            }
        )
        results.append(
            {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": name,
                "content": result.content,
                "isError": True,
                "timestamp": int(time.time() * 1000),
            }
        )
    return results
