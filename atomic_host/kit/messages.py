"""Reading and converting the neutral message dicts (``{"role", "content": str | [blocks]}``).

Session entries become agent messages (``entry_to_message``: user, assistant, toolResult,
bashExecution, custom, branchSummary dicts) and agent messages become the provider-facing
user/assistant/toolResult messages (``convert_to_llm``, tool-call pairing repaired on the way).
The transcript text of a conversation is :mod:`atomic_host.kit.transcript`.
"""

from __future__ import annotations

from typing import Any

from atomic_host.kit._fast.lazy import module

__all__ = [
    "convert_to_llm",
    "entry_to_message",
    "is_active_boundary",
    "message_text",
    "starts_user_turn",
    "unique_call_id",
]

BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "</summary>"
VERBATIM_STRATEGY = "verbatim-lines"
"""``details.strategy`` of a compaction entry that is an active boundary of the context."""
INTERRUPTED_TOOL_TEXT = (
    "Tool execution was interrupted after it started; its result is unavailable. "
    "Inspect side effects before deciding whether to retry it."
)


def message_text(message: dict[str, Any] | None, sep: str = "") -> str:
    """The text blocks of a message's content joined with ``sep`` (a string content as is)."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return sep.join(
        b["text"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def ms_from_iso(value: object) -> float | None:
    """Unix ms of an ISO timestamp, or None when it does not parse."""
    if not isinstance(value, str):
        return None
    try:
        dt = module("datetime").datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=module("datetime").UTC)
    return dt.timestamp() * 1000


# -- entries → agent messages ------------------------------------------------------------------
def timestamp_ms(timestamp: Any) -> float | int:
    """Unix ms (an int) of an entry's ISO timestamp, 0 when it does not parse."""
    value = ms_from_iso(timestamp)
    return int(value) if value is not None else 0


def _normalized(message: dict[str, Any]) -> dict[str, Any]:
    if (
        message.get("role") in ("user", "assistant", "toolResult", "custom")
        and message.get("content") is None
    ):
        return {**message, "content": []}
    return message


def custom_message_from_entry(entry: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "custom",
        "customType": entry.get("customType"),
        "content": entry.get("content") if entry.get("content") is not None else [],
        "display": entry.get("display", True),
        "details": entry.get("details"),
        "timestamp": timestamp_ms(entry.get("timestamp")),
    }
    if entry.get("excludeFromContext") is True:
        message["excludeFromContext"] = True
    return message


def branch_summary_message(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "branchSummary",
        "summary": entry["summary"],
        "fromId": entry.get("fromId"),
        "timestamp": timestamp_ms(entry.get("timestamp")),
    }


def entry_to_message(entry: dict[str, Any]) -> dict[str, Any] | None:
    """The one context message a message/custom_message/branch_summary entry contributes, if any."""
    kind = entry.get("type")
    if kind == "message" and isinstance(entry.get("message"), dict):
        return _normalized(entry["message"])
    if kind == "custom_message":
        return custom_message_from_entry(entry)
    if kind == "branch_summary" and isinstance(entry.get("summary"), str) and entry["summary"]:
        return branch_summary_message(entry)
    return None


def is_active_boundary(entry: dict[str, Any]) -> bool:
    """Whether ``entry`` is a compaction whose summary replaces the turns before it in the context."""
    details = entry.get("details")
    return (
        entry.get("type") == "compaction"
        and isinstance(details, dict)
        and details.get("strategy") == VERBATIM_STRATEGY
    )



# -- agent messages → provider messages ----------------------------------------------------------
def bash_execution_to_text(message: dict[str, Any]) -> str:
    """The exact user text a ``bashExecution`` message becomes."""
    text = f"Ran `{message.get('command', '')}`\n"
    output = message.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    exit_code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif isinstance(exit_code, int) and exit_code != 0:
        text += f"\n\nCommand exited with code {exit_code}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message['fullOutputPath']}]"
    return text


def _block_visible(block: Any) -> bool:
    if not isinstance(block, dict):
        return False
    kind = block.get("type")
    if kind == "image":
        return True
    if kind == "text":
        return isinstance(block.get("text"), str) and bool(block["text"].strip())
    # Future block types stay visible; only malformed/untyped blocks are dropped.
    return isinstance(kind, str) and bool(kind.strip())


def _content_visible(content: Any) -> bool:
    if isinstance(content, str):
        return bool(content.strip())
    return isinstance(content, list) and any(_block_visible(b) for b in content)


def starts_user_turn(message: dict[str, Any]) -> bool:
    """Whether a message becomes a provider-visible user turn."""
    role = message.get("role")
    if role == "user":
        return _content_visible(message.get("content"))
    if role == "custom":
        return message.get("excludeFromContext") is not True and _content_visible(message.get("content"))
    if role == "branchSummary":
        return isinstance(message.get("summary"), str) and bool(message["summary"])
    if role == "bashExecution":
        return message.get("excludeFromContext") is not True
    return False


def _redacted_thinking(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if not isinstance(content, list) or not any(
        isinstance(b, dict) and b.get("type") == "redacted_thinking" for b in content
    ):
        return message
    blocks = [
        {"type": "thinking", "thinking": "", "thinkingSignature": b["data"], "redacted": True}
        if isinstance(b, dict) and b.get("type") == "redacted_thinking" and isinstance(b.get("data"), str)
        else b
        for b in content
    ]
    return {**message, "content": blocks}


def _convert_one(raw: dict[str, Any]) -> dict[str, Any] | None:
    message = _normalized(raw)
    role = message.get("role")
    if role == "assistant":
        return _redacted_thinking(message)
    if role in ("toolResult", "system"):
        return message
    if not starts_user_turn(message):
        return None
    timestamp = message.get("timestamp")
    if role == "bashExecution":
        return {
            "role": "user",
            "content": [{"type": "text", "text": bash_execution_to_text(message)}],
            "timestamp": timestamp,
        }
    if role == "custom":
        content = message["content"]
        blocks = (
            [{"type": "text", "text": content}]
            if isinstance(content, str)
            else [b for b in content if _block_visible(b)]
        )
        return {"role": "user", "content": blocks, "timestamp": timestamp}
    if role == "branchSummary":
        text = BRANCH_SUMMARY_PREFIX + message["summary"] + BRANCH_SUMMARY_SUFFIX
        return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": timestamp}
    if role == "user":
        content = message["content"]
        return (
            message
            if not isinstance(content, list)
            else {**message, "content": [b for b in content if _block_visible(b)]}
        )
    return None  # legacy compactionSummary and unknown roles never reach a provider


def _tool_calls(message: dict[str, Any]) -> list[tuple[str, str]]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [
        (b["id"], b["name"])
        for b in content
        if isinstance(b, dict)
        and b.get("type") == "toolCall"
        and isinstance(b.get("id"), str)
        and isinstance(b.get("name"), str)
    ]


def unique_call_id(call_id: str, taken: set[str] | dict[str, Any]) -> str:
    """``call_id``, or when it is empty or ``taken``, the first of ``<id>_2``, ``<id>_3`` … that is
    not (``call`` for an empty id): the characters every API accepts in an id are kept."""
    base = call_id or "call"
    if base not in taken:
        return base
    n = 2
    while f"{base}_{n}" in taken:
        n += 1
    return f"{base}_{n}"


def _with_unique_call_ids(
    message: dict[str, Any], calls: list[tuple[str, str]]
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """An assistant message whose tool ``calls`` share an id (a history written before ids were
    made unique, or by another program), with the repeats renamed (:func:`unique_call_id`), and
    for each id the ids its results take in order."""
    taken = {call_id: True for call_id, _ in calls}
    seen: set[str] = set()
    order: dict[str, list[str]] = {}
    content = []
    for block in message["content"]:
        if isinstance(block, dict) and block.get("type") == "toolCall" and isinstance(block.get("id"), str):
            call_id = block["id"]
            new_id = call_id if call_id not in seen else unique_call_id(call_id, taken)
            seen.add(call_id)
            taken[new_id] = True
            order.setdefault(call_id, []).append(new_id)
            block = {**block, "id": new_id} if new_id != call_id else block
        content.append(block)
    return {**message, "content": content}, order


def repair_tool_pairing(
    messages: list[dict[str, Any]], *, repair_trailing: bool = False
) -> list[dict[str, Any]]:
    """Keep the first result per announced tool call, drop orphans, close unanswered calls.

    Only ``toolUse`` turns represent executed calls; an unanswered one gets an error result
    saying it was interrupted, before the next user turn (or at the end with ``repair_trailing``).
    Tool calls of one message that share an id get unique ids, their results taking them in order.
    """
    repaired: list[dict[str, Any]] = []
    allowed: set[str] | None = None
    answered: set[str] = set()
    pending: list[tuple[str, str]] = []
    pending_ts: Any = 0
    renamed: dict[str, list[str]] | None = None

    def flush() -> None:
        nonlocal allowed, pending
        for call_id, name in pending:
            if call_id not in answered:
                repaired.append(
                    {
                        "role": "toolResult",
                        "toolCallId": call_id,
                        "toolName": name,
                        "content": [{"type": "text", "text": INTERRUPTED_TOOL_TEXT}],
                        "isError": True,
                        "timestamp": pending_ts,
                    }
                )
        allowed, pending = None, []
        answered.clear()

    for message in messages:
        role = message.get("role")
        if role == "system":
            repaired.append(message)
        elif role == "assistant":
            flush()
            calls = _tool_calls(message)
            renamed = None
            if len({call_id for call_id, _ in calls}) != len(calls):
                message, renamed = _with_unique_call_ids(message, calls)
                calls = _tool_calls(message)
            pending = calls if message.get("stopReason") == "toolUse" else []
            allowed = {call_id for call_id, _ in calls}
            pending_ts = message.get("timestamp", 0)
            repaired.append(message)
        elif role == "toolResult":
            call_id = message.get("toolCallId")
            if renamed and renamed.get(call_id):  # type: ignore[arg-type]
                call_id = renamed[call_id].pop(0)  # type: ignore[index]
                message = {**message, "toolCallId": call_id}
            if allowed is not None and call_id in allowed and call_id not in answered:
                answered.add(call_id)
                repaired.append(message)
        elif role == "user" and not _content_visible(message.get("content")):
            repaired.append(message)
        else:
            flush()
            repaired.append(message)
    if repair_trailing:
        flush()
    return repaired


def convert_to_llm(messages: list[dict[str, Any]], *, repair_trailing: bool = False) -> list[dict[str, Any]]:
    """AgentMessages → provider messages (user/assistant/toolResult), pairing repaired.

    ``repair_trailing``: also close a final unanswered tool call (when reopening an idle session).
    """
    converted = [m for m in (_convert_one(raw) for raw in messages if isinstance(raw, dict)) if m is not None]
    return repair_tool_pairing(converted, repair_trailing=repair_trailing)
