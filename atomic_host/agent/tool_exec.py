"""Executing one assistant message's tool calls: in parallel, gated by hooks, results in source order."""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import TYPE_CHECKING, Any

from atomic_host.agent.oversized import is_oversized, persist_if_oversized
from atomic_host.contract.events import ToolCallEvent, ToolResultEvent
from atomic_host.contract.tools import ToolError, ToolResult
from atomic_host.kit import secrets
from atomic_host.kit.log import log, plugin_log
from atomic_host.plugins.faults import fault_report, fault_text

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from atomic_host.agent.ports import ToolPorts

ABORT_GRACE_S = 1.0
"""After an abort, how long a tool call may take to end on its own (bash kills its process group
and answers "Command aborted") before it is cancelled."""
ABORTED_TEXT = "Tool execution was aborted"


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
    run: ToolPorts,
    name: str,
    args: dict[str, Any],
    call_id: str,
    signal: asyncio.Event,
    on_update: Any = None,
    event: ToolCallEvent | None = None,
) -> ToolResult:
    """Run one tool call through the hooks; every failure becomes an error result. ``event`` is
    the ``tool_call`` hook's event (``event.terminate`` tells the caller whether a hook asked to
    end the run)."""
    tool = run.tools.get(name)
    if tool is None or tool not in run.model_tools():
        if tool is not None and tool.opt_in and not run.tools.is_active(tool):
            return ToolResult.text(
                f'Tool {name} is off: it is opt-in. Enable it with --tools +{name} or add "+{name}" '
                "to the defaultTools setting.",
                is_error=True,
            )
        return ToolResult.text(f"Tool {name} not found", is_error=True)
    event = event or ToolCallEvent(tool_name=name, tool_call_id=call_id, input=dict(args))
    decision = await run.hooks.acall("tool_call", event=event)
    if decision is not None:
        return ToolResult.text(decision.reason or "Tool execution was blocked", is_error=True)
    try:
        model = tool.params_model()
        params: Any = event.input if model is None else model.model_validate(event.input)
    except asyncio.CancelledError:
        raise
    except BaseException as exc:  # a lazily imported params module is plugin code too (faults.py)
        message = _validation_message(exc) if isinstance(exc, Exception) else fault_text(exc)
        return ToolResult.text(message, is_error=True)
    ctx = run.tool_context(
        tool,
        call_id,
        signal,
        on_update or (lambda _r: None),
        lambda n, a: _nested_call(run, n, a, signal),
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
    except BaseException as exc:  # sys.exit() in a handler is its error, not the host's end (faults.py)
        if not isinstance(exc, Exception):
            plugin_log.warning(f"tool {name} ({tool.source_path or tool.plugin}): {fault_report(exc)}")
        result = ToolResult.text(fault_text(exc), is_error=True)
    if run.hooks.has_impls("tool_result"):
        patch_event = ToolResultEvent(tool_name=name, tool_call_id=call_id, input=event.input, result=result)
        await run.hooks.acall("tool_result", event=patch_event)
        result = patch_event.result
    return mask_result(result)


def mask_result(result: ToolResult) -> ToolResult:
    """The result with known credentials masked (the same object when clean): a tool that runs
    ``env`` or reads ``auth.json`` must not record or send the keys back to the model."""
    if not secrets.active():
        return result
    content, details = secrets.mask_obj(result.content), secrets.mask_obj(result.details)
    if content is result.content and details is result.details:
        return result
    return ToolResult(content, details, result.is_error)


async def until_aborted(
    run: ToolPorts, name: str, call: Coroutine[Any, Any, ToolResult], signal: asyncio.Event
) -> ToolResult:
    """Run one tool call (hooks and handler), but never longer than the abort allows: a call that
    has not ended ``ABORT_GRACE_S`` after the signal is cancelled and answers ``ABORTED_TEXT``,
    also when it ignores the cancellation (it is then left behind, never awaited)."""
    task = asyncio.ensure_future(call)
    aborted = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({task, aborted}, return_when=asyncio.FIRST_COMPLETED)
        if not task.done():
            await asyncio.wait({task}, timeout=ABORT_GRACE_S)
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        aborted.cancel()
    if task.done():
        return task.result()
    task.cancel()
    await asyncio.wait({task}, timeout=ABORT_GRACE_S)
    tool = run.tools.get(name)
    owner = (tool.source_path or tool.plugin) if tool is not None else "?"
    log.warning(f"tool {name} ({owner}) did not stop on abort; cancelled it")
    if task.done() and not task.cancelled() and task.exception() is None:
        return task.result()
    return ToolResult.text(ABORTED_TEXT, is_error=True)


async def _nested_call(run: ToolPorts, name: str, args: dict[str, Any], signal: asyncio.Event) -> ToolResult:
    tool = run.tools.get(name)
    if tool is not None and tool.exposure == "model-only":
        return ToolResult.text(f"Tool {name} cannot be called from code", is_error=True)
    return await call_tool(run, name, args, f"nested-{time.monotonic_ns()}", signal)


async def execute_tool_calls(
    run: ToolPorts, calls: list[dict[str, Any]], refused: dict[int, str] | None = None
) -> tuple[list[dict[str, Any]], bool]:
    """Emit start events in source order, run all calls concurrently, return the toolResult
    messages in source order (their message events are emitted by the caller) and whether a
    ``tool_call`` hook asked to end the run after this batch (``terminate``).

    A call listed in ``refused`` (by its index in ``calls``) is not run, and no hook sees it: its
    result is that error text (arguments that cannot be trusted, see ``truncated_calls``)."""
    refused = refused or {}
    emit = run.emit
    terminate = False
    for call in calls:
        emit(
            {
                "type": "tool_execution_start",
                "toolCallId": call["id"],
                "toolName": call["name"],
                "args": call.get("arguments", {}),
            }
        )

    async def run_one(index: int, call: dict[str, Any]) -> dict[str, Any]:
        name, call_id, args = call["name"], call["id"], call.get("arguments") or {}
        if index in refused:
            return _ended(emit, call_id, name, ToolResult.text(refused[index], is_error=True))

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

        nonlocal terminate
        signal = run.abort_signal
        event = ToolCallEvent(tool_name=name, tool_call_id=call_id, input=dict(args))
        result = await until_aborted(run, name, call_tool(run, name, args, call_id, signal, on_update, event), signal)
        terminate = terminate or event.terminate
        tool = run.tools.get(name)
        if is_oversized(tool, result):  # a file or a database row: written off the loop
            result = await asyncio.to_thread(persist_if_oversized, run, tool, call_id, result)
        return _ended(emit, call_id, name, result)

    messages = list(await asyncio.gather(*(run_one(i, c) for i, c in enumerate(calls))))
    return messages, terminate


def _ended(emit: Any, call_id: str, name: str, result: ToolResult) -> dict[str, Any]:
    """Emit ``tool_execution_end`` for a finished call and return its toolResult message."""
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
