"""The agent loop: context → provider stream → tool calls → tool results → … (semantics §3.2).

One call of :func:`run_agent` is one run: ``agent_start`` … ``agent_end``. Steering is polled
after each turn's whole tool batch; follow-ups only when the loop would otherwise stop.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from atomic_host.agent.tool_exec import execute_tool_calls
from atomic_host.contract.providers import StreamOptions
from atomic_host.core.jsonfast import dumps
from atomic_host.kit.llm.complete import assistant_message, failed
from atomic_host.kit.llm.usage import empty_usage

if TYPE_CHECKING:
    from atomic_host.engine.agent_session import AgentSession

ZERO_USAGE = empty_usage()
"""Read-only: the usage sent while a provider has reported none."""


class _UpdateEmitter:
    """Turns provider events into ``message_update`` lines. ``usage`` changes a few times per
    message while deltas arrive hundreds of times, so its JSON is encoded once per change."""

    def __init__(self, emit: Any) -> None:
        self.emit = emit
        self.usage_key: tuple[Any, ...] = ()
        self.usage_json = ""

    def send(self, event: dict[str, Any]) -> None:
        partial = event.get("partial") or {}
        usage = partial.get("usage") or ZERO_USAGE
        key = (
            usage.get("input"),
            usage.get("output"),
            usage.get("cacheRead"),
            usage.get("cacheWrite"),
            usage.get("totalTokens"),
        )
        if key != self.usage_key:
            self.usage_key, self.usage_json = key, dumps(usage)
        delta = {k: v for k, v in event.items() if k != "partial"}
        update: dict[str, Any] = {"type": "message_update", "usage": usage, "assistantMessageEvent": delta}
        end_turn = partial.get("endTurn")
        if end_turn is not None:
            update["endTurn"] = end_turn
            self.emit(update)
        else:
            line = f'{{"type":"message_update","usage":{self.usage_json},"assistantMessageEvent":{dumps(delta)}}}'
            self.emit(update, line)


async def stream_assistant(agent: AgentSession, system_prompt: str | None) -> dict[str, Any]:
    """Stream one assistant message, emitting message_start / message_update / message_end."""
    emit = agent.emit
    model = agent.model
    assert model is not None
    emit({"type": "message_start", "message": assistant_message(model, "pending")})
    stream_fn = agent.rt.models.stream_fn(model["api"])
    final: dict[str, Any] | None = None
    if agent.abort_signal.is_set():
        final = failed("Request was aborted", model, "aborted")
    elif stream_fn is None:
        final = failed(f"No API implementation registered for {model['api']}", model)
    else:
        context = agent.llm_context(system_prompt)
        options = agent.stream_options()
        updates = _UpdateEmitter(emit)
        try:
            async with contextlib.aclosing(stream_fn(model, context, options)) as events:
                async for event in events:
                    etype = event.get("type")
                    if etype == "done":
                        final = event.get("message") or event.get("partial")
                        break
                    if etype == "error":
                        final = event.get("error") or event.get("partial")
                        break
                    updates.send(event)
        except Exception as exc:  # a provider broke its "never raises" contract
            final = failed(f"Provider error: {exc}", model)
        if final is None:
            final = failed("Provider stream ended without a terminal event", model)
    final = {k: v for k, v in final.items() if k != "partial"}
    if final.get("stopReason") == "pending":
        final["stopReason"] = "error"
    emit({"type": "message_end", "message": final})
    agent.record_message(final)
    return final


async def run_agent(agent: AgentSession, new_messages: list[dict[str, Any]], system_prompt: str | None) -> None:
    """One run: agent_start, turns until the model stops, agent_end."""
    emit = agent.emit
    run_messages: list[dict[str, Any]] = []
    emit({"type": "agent_start"})
    pending = new_messages
    while True:
        emit({"type": "turn_start"})
        for message in pending:
            agent.deliver_message(message)
            run_messages.append(message)
        pending = []
        assistant = await stream_assistant(agent, system_prompt)
        run_messages.append(assistant)
        agent.note_assistant(assistant)
        if assistant["stopReason"] in ("error", "aborted"):
            emit({"type": "turn_end", "message": assistant, "toolResults": []})
            break
        calls = [b for b in assistant.get("content", []) if b.get("type") == "toolCall"]
        results: list[dict[str, Any]] = []
        if calls:
            results = await execute_tool_calls(agent, calls)
            for result in results:
                emit({"type": "message_start", "message": result})
                emit({"type": "message_end", "message": result})
                agent.record_message(result)
                run_messages.append(result)
        emit({"type": "turn_end", "message": assistant, "toolResults": results})
        if agent.abort_signal.is_set():
            break
        pending = agent.poll_steering()
        if pending or calls:
            continue
        pending = agent.poll_follow_up()
        if not pending:
            break
    emit({"type": "agent_end", "messages": run_messages})


def make_stream_options(agent: AgentSession) -> StreamOptions:
    """Neutral provider options from the session state and settings."""
    model = agent.model or {}
    settings = agent.rt.settings
    level = agent.thinking_level
    return StreamOptions(
        api_key=agent.rt.models.resolve_api_key(model.get("provider", "")),
        reasoning=None if level == "off" or not model.get("reasoning") else level,
        thinking_budgets=settings.get("thinkingBudgets"),
        max_tokens=model.get("maxTokens"),
        signal=agent.abort_signal,
        session_id=agent.session.id,
        headers=agent.rt.models.request_headers(model) if model else {},
        stream_deadline_s=settings.int("streamDeadlineMs", 300000) / 1000,
        max_retries=settings.int("retry.provider.maxRetries", 0),
        max_retry_delay_ms=settings.int("retry.provider.maxRetryDelayMs", 60000),
        http_client=agent.rt.http_client() if model.get("api") != "faux" else None,
    )
