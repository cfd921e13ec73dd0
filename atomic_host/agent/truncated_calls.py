"""Tool calls whose arguments cannot be trusted: answered with an error, never run.

Two ways a call's arguments can be cut short:

- A ``length`` stop (Anthropic ``max_tokens``, Chat ``length``, Responses ``max_output_tokens``) can
  land inside a tool call's arguments, even before its block is closed.
- Arguments that are not a complete JSON object when the reply ends, whatever the stop reason (a
  server or proxy that cuts the stream and still says ``tool_use``/``tool_calls``). The adapters'
  builder lists those calls in its ``done`` event (``incompleteToolCalls``).

The streaming JSON parser still salvages an object from the half-received text (``{"command":
"rm -rf bui``), which may validate and would do something nobody asked for. That object is only
for display while the reply streams; every such call gets an error result that tells the model to
re-issue it, as pi's agent loop does for ``length`` stops, and the run continues so the model sees
those results. A model that is cut off again at once (its ``maxTokens`` is too small for what it
wants to write) would loop forever, a paid request each time: the second cut-off reply in a row
ends the run with an error (:func:`repeated_cut_off_text`).
"""

from __future__ import annotations

from typing import Any


def truncated_call_text(name: str) -> str:
    """The error result of a tool call from a reply cut off by the output-token limit."""
    return (
        f'Tool call "{name}" was not executed: the response hit the output token limit, so its arguments '
        "may be truncated. Re-issue the tool call with complete arguments."
    )


def incomplete_call_text(name: str) -> str:
    """The error result of a tool call whose arguments were not a complete JSON object."""
    return (
        f'Tool call "{name}" was not executed: its arguments were not a complete JSON object when the '
        "response ended, so they may be truncated. Re-issue the tool call with complete arguments."
    )


def is_cut_off(message: dict[str, Any]) -> bool:
    """A reply stopped by the output-token limit with a tool call in it (the run would go on)."""
    return message.get("stopReason") == "length" and any(
        b.get("type") == "toolCall" for b in message.get("content") or []
    )


def repeated_cut_off_text(model: dict[str, Any]) -> str:
    """The ``errorMessage`` of the second cut-off reply in a row, which ends the run."""
    return (
        f"The reply hit the output token limit (maxTokens {model.get('maxTokens')}) inside a tool call twice "
        "in a row, so the run stopped: the cut-off tool calls were not run. Raise maxTokens for "
        f"{model.get('provider')}/{model.get('id')} (models.json) or ask for smaller steps."
    )


def refused_calls(
    message: dict[str, Any], calls: list[dict[str, Any]], incomplete: frozenset[str]
) -> dict[int, str]:
    """The error result text of each call (by its index in ``calls``) that must not run:
    every call of a ``length`` stop, and the calls whose arguments were incomplete."""
    if message.get("stopReason") == "length":
        return {i: truncated_call_text(call["name"]) for i, call in enumerate(calls)}
    return {i: incomplete_call_text(call["name"]) for i, call in enumerate(calls) if call["id"] in incomplete}
