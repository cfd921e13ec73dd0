"""Building the LLM context from a branch (§2.4).

``build_session_context`` turns the root→leaf entries into AgentMessages (user, assistant,
toolResult, bashExecution, custom, branchSummary dicts) and synthesises the compaction message of
an active boundary. Converting messages for providers (``convert_to_llm``) and the transcript
grammar are in the kit (:mod:`atomic_host.kit.messages`, :mod:`atomic_host.kit.transcript`), where
plugins use them too; the names are re-exported here for the host's importers.
"""

from __future__ import annotations

from typing import Any

from atomic_host.contract.records import field, record
from atomic_host.kit.messages import (
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX,
    INTERRUPTED_TOOL_TEXT,
    VERBATIM_STRATEGY,
    bash_execution_to_text,
    convert_to_llm,
    entry_to_message,
    is_active_boundary,
    repair_tool_pairing,
    starts_user_turn,
    timestamp_ms,
)
from atomic_host.kit.transcript import serialize_conversation, serialize_transcript

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "INTERRUPTED_TOOL_TEXT",
    "SUMMARY_COMPACTION_PREFIX",
    "VERBATIM_COMPACTION_PREFIX",
    "VERBATIM_STRATEGY",
    "SessionContext",
    "bash_execution_to_text",
    "build_session_context",
    "compaction_message",
    "convert_to_llm",
    "entry_to_message",
    "is_active_boundary",
    "repair_tool_pairing",
    "serialize_conversation",
    "serialize_transcript",
    "starts_user_turn",
]

VERBATIM_COMPACTION_PREFIX = (
    "The earlier conversation was compacted. Below is the verbatim transcript of the retained lines; "
    'elided spans are marked "(filtered N lines)".\n\n'
)
SUMMARY_COMPACTION_PREFIX = "The following is a summary of the earlier conversation:\n\n"


@record  # not @dataclass: no per-class code to compile at every start
class SessionContext:
    """What a branch contributes to the next model request."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    model: dict[str, str] | None = None
    """``{"provider", "modelId"}`` from the last model_change or assistant message."""
    thinking_level: str = "off"


def compaction_message(
    entry: dict[str, Any], retained_tail: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The synthesized custom ``compaction`` message for an active boundary (+ serialized kept tail)."""
    details = entry.get("details")
    summary = entry.get("summary") if isinstance(entry.get("summary"), str) else ""
    prefix = (
        SUMMARY_COMPACTION_PREFIX
        if isinstance(details, dict) and details.get("backend") == "summary"
        else VERBATIM_COMPACTION_PREFIX
    )
    content: list[dict[str, Any]] = [{"type": "text", "text": prefix + summary}]
    if retained_tail:
        if summary:
            content[0]["text"] += "\n\n"
        for chunk in retained_tail:
            last = content[-1]
            if chunk.get("type") == "text" and last.get("type") == "text":
                last["text"] += chunk["text"]
            else:
                content.append(dict(chunk))
    tokens_before = entry.get("tokensBefore")
    if details is None:
        merged: Any = {"tokensBefore": tokens_before}
    elif isinstance(details, dict) and "tokensBefore" not in details:
        merged = {**details, "tokensBefore": tokens_before}
    else:
        merged = details
    return {
        "role": "custom",
        "customType": "compaction",
        "content": content,
        "display": True,
        "details": merged,
        "timestamp": timestamp_ms(entry.get("timestamp")),
    }


def build_session_context(path: list[dict[str, Any]]) -> SessionContext:
    """Context of a branch given its entries root→leaf (§2.4). Unknown entry types are ignored."""
    ctx = SessionContext()
    # model and thinking level: the last of each on the branch, found scanning back from the leaf
    model_found = level_found = False
    for i in range(len(path) - 1, -1, -1):
        entry = path[i]
        kind = entry.get("type")
        if not model_found:
            if kind == "model_change":
                ctx.model = {"provider": entry.get("provider"), "modelId": entry.get("modelId")}
                model_found = True
            elif kind == "message":
                message = entry.get("message")
                if isinstance(message, dict) and message.get("role") == "assistant":
                    ctx.model = {"provider": message.get("provider"), "modelId": message.get("model")}
                    model_found = True
        if not level_found and kind == "thinking_level_change" and isinstance(entry.get("thinkingLevel"), str):
            ctx.thinking_level = entry["thinkingLevel"]
            level_found = True
        if model_found and level_found:
            break

    boundary_index = None
    for i in range(len(path) - 1, -1, -1):
        if path[i].get("type") == "compaction" and is_active_boundary(path[i]):
            boundary_index = i
            break
    if boundary_index is None:
        ctx.messages = _messages_of(path)
        return ctx

    boundary = path[boundary_index]
    kept_id = boundary.get("firstKeptEntryId")
    first_kept = next(
        (i for i in range(boundary_index) if kept_id is not None and path[i].get("id") == kept_id), None
    )
    tail: list[dict[str, Any]] = []
    if first_kept is not None:
        tail_messages = [m for m in map(entry_to_message, path[first_kept:boundary_index]) if m is not None]
        if tail_messages:
            tail = serialize_transcript(convert_to_llm(tail_messages), mode="retained")
    ctx.messages = [compaction_message(boundary, tail)]
    ctx.messages.extend(_messages_of(path[boundary_index + 1 :]))
    return ctx


def _messages_of(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``[entry_to_message(e) for e in entries]`` without the Nones: the common case (a message
    entry whose message has its content) inline, one call per entry less on a long branch."""
    out = []
    append = out.append
    for entry in entries:
        message = entry.get("message")
        if (
            type(message) is dict
            and entry.get("type") == "message"
            and message.get("content") is not None
        ):
            append(message)  # what entry_to_message returns for it: the message itself
            continue
        converted = entry_to_message(entry)
        if converted is not None:
            append(converted)
    return out
