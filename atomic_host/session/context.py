"""Building the LLM context from a branch (§2.4).

``build_session_context`` turns the root→leaf entries into AgentMessages (user, assistant,
toolResult, bashExecution, custom, branchSummary dicts) and synthesises the compaction message of
an active boundary. Converting messages for providers (``convert_to_llm``) and the transcript
grammar are in the kit (:mod:`atomic_host.kit.messages`, :mod:`atomic_host.kit.transcript`), where
plugins use them too; the names are re-exported here for the host's importers.
"""

from __future__ import annotations

import operator
from itertools import compress, repeat
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
    """Context of a branch given its entries root→leaf (§2.4). Unknown entry types are ignored.

    A long branch is walked by C loops (``map``, ``list.index``, ``compress``) over its entry
    types, not a Python step per entry: the first ``get_state`` after switching to a 4,000-entry
    session builds it (for ``messageCount``), and a Python walk took ~1.2 ms of it."""
    ctx = SessionContext()
    types = list(map(dict.get, path, repeat("type")))
    # model: the last model_change or assistant message, a few steps back from the leaf
    for i in range(len(path) - 1, -1, -1):
        entry = path[i]
        kind = types[i]
        if kind == "model_change":
            ctx.model = {"provider": entry.get("provider"), "modelId": entry.get("modelId")}
            break
        if kind == "message":
            message = entry.get("message")
            if isinstance(message, dict) and message.get("role") == "assistant":
                ctx.model = {"provider": message.get("provider"), "modelId": message.get("model")}
                break
    # thinking level: the last thinking_level_change with a string level (set near the root)
    for i in _positions_back(types, "thinking_level_change"):
        level = path[i].get("thinkingLevel")
        if isinstance(level, str):
            ctx.thinking_level = level
            break

    boundary_index = next((i for i in _positions_back(types, "compaction") if is_active_boundary(path[i])), None)
    if boundary_index is None:
        ctx.messages = _messages_of(path, types)
        return ctx

    boundary = path[boundary_index]
    kept_id = boundary.get("firstKeptEntryId")
    first_kept = None
    if kept_id is not None:
        ids = list(map(dict.get, path[:boundary_index], repeat("id")))
        if kept_id in ids:
            first_kept = ids.index(kept_id)
    tail: list[dict[str, Any]] = []
    if first_kept is not None:
        tail_messages = [m for m in map(entry_to_message, path[first_kept:boundary_index]) if m is not None]
        if tail_messages:
            tail = serialize_transcript(convert_to_llm(tail_messages), mode="retained")
    ctx.messages = [compaction_message(boundary, tail)]
    ctx.messages.extend(_messages_of(path[boundary_index + 1 :], types[boundary_index + 1 :]))
    return ctx


def branch_message_count(session: Any) -> int | None:
    """``len(build_session_context(session.branch()).messages)`` without building the messages,
    when the branch is every entry of the session (one never navigated back, the leaf at its
    end: any session just opened from a file this host wrote); None otherwise.

    Counted from the entry types the session keeps (``Session.types``): C loops over a list of
    strings, not a step per entry. Each ``message`` entry whose message is an object gives one
    message, each ``custom_message`` one, each ``branch_summary`` with a summary one, and an
    active compaction boundary one (its synthesized message) in place of everything before it."""
    if not session.branch_is_every_entry():
        return None
    entries, types, odd = session.entries, session.types(), session.odd_message_positions()
    boundary = None
    if session.count_of("compaction"):
        boundary = next((i for i in _positions_back(types, "compaction") if is_active_boundary(entries[i])), None)
    if boundary is None:  # the counts the session keeps: O(1)
        count = session.count_of("message") - len(odd) + session.count_of("custom_message")
        start, summaries = 0, session.count_of("branch_summary")
    else:  # what follows the boundary (a compacted branch's tail)
        start = boundary + 1
        kinds = types[start:]
        count = 1 + kinds.count("message") - sum(1 for i in odd if i >= start) + kinds.count("custom_message")
        summaries = kinds.count("branch_summary")
    if summaries:
        for i in _positions_back(types, "branch_summary"):
            summary = entries[i].get("summary")
            if i >= start and isinstance(summary, str) and summary:
                count += 1
    return count


def _positions_back(types: list[Any], kind: str) -> list[int]:
    """Positions of ``kind`` in ``types``, last first (found by ``list.index`` on the reversed
    list: a C loop; a branch holds few entries of the kinds asked for)."""
    backwards = types[::-1]
    last = len(types) - 1
    positions: list[int] = []
    found = -1
    while True:
        try:
            found = backwards.index(kind, found + 1)
        except ValueError:
            return positions
        positions.append(last - found)


def _messages_of(entries: list[dict[str, Any]], types: list[Any]) -> list[dict[str, Any]]:
    """``[entry_to_message(e) for e in entries]`` without the Nones (``types``: each entry's
    ``type``). The common branch (message entries whose messages have their content, between
    entries that contribute nothing) is the messages themselves: picked out by C loops; any other
    branch takes the step per entry."""
    if "custom_message" not in types and "branch_summary" not in types:
        is_message = map(operator.eq, types, repeat("message"))
        messages = list(map(dict.get, compress(entries, is_message), repeat("message")))
        # exactly dicts (what entry_to_message returns as is), each with its content
        if (not messages or set(map(type, messages)) == {dict}) and None not in map(
            dict.get, messages, repeat("content")
        ):
            return messages
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
