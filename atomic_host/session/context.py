"""Building the LLM context from a branch (§2.4) and converting agent messages for providers.

``build_session_context`` turns the root→leaf entries into AgentMessages (user, assistant,
toolResult, bashExecution, custom, branchSummary dicts); ``convert_to_llm`` turns those into the
provider-facing user/assistant/toolResult messages, repairing tool-call pairing on the way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from atomic_host.kit.sessions.ids import ms_from_iso

BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "</summary>"
VERBATIM_COMPACTION_PREFIX = (
    "The earlier conversation was compacted. Below is the verbatim transcript of the retained lines; "
    'elided spans are marked "(filtered N lines)".\n\n'
)
SUMMARY_COMPACTION_PREFIX = "The following is a summary of the earlier conversation:\n\n"
VERBATIM_STRATEGY = "verbatim-lines"
INTERRUPTED_TOOL_TEXT = (
    "Tool execution was interrupted after it started; its result is unavailable. "
    "Inspect side effects before deciding whether to retry it."
)
TOOL_RESULT_MAX_CHARS = 16_000


@dataclass
class SessionContext:
    """What a branch contributes to the next model request."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    model: dict[str, str] | None = None
    """``{"provider", "modelId"}`` from the last model_change or assistant message."""
    thinking_level: str = "off"


# -- entries → agent messages ------------------------------------------------------------------
def _ms(timestamp: Any) -> float | int:
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
        "timestamp": _ms(entry.get("timestamp")),
    }
    if entry.get("excludeFromContext") is True:
        message["excludeFromContext"] = True
    return message


def branch_summary_message(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "branchSummary",
        "summary": entry["summary"],
        "fromId": entry.get("fromId"),
        "timestamp": _ms(entry.get("timestamp")),
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
    details = entry.get("details")
    return (
        entry.get("type") == "compaction"
        and isinstance(details, dict)
        and details.get("strategy") == VERBATIM_STRATEGY
    )


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
        "timestamp": _ms(entry.get("timestamp")),
    }


def build_session_context(path: list[dict[str, Any]]) -> SessionContext:
    """Context of a branch given its entries root→leaf (§2.4). Unknown entry types are ignored."""
    ctx = SessionContext()
    for entry in path:
        kind = entry.get("type")
        if kind == "thinking_level_change" and isinstance(entry.get("thinkingLevel"), str):
            ctx.thinking_level = entry["thinkingLevel"]
        elif kind == "model_change":
            ctx.model = {"provider": entry.get("provider"), "modelId": entry.get("modelId")}
        elif (
            kind == "message"
            and isinstance(entry.get("message"), dict)
            and entry["message"].get("role") == "assistant"
        ):
            message = entry["message"]
            ctx.model = {"provider": message.get("provider"), "modelId": message.get("model")}

    boundary_index = next((i for i in range(len(path) - 1, -1, -1) if is_active_boundary(path[i])), None)
    if boundary_index is None:
        ctx.messages = [m for m in map(entry_to_message, path) if m is not None]
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
    ctx.messages.extend(m for m in map(entry_to_message, path[boundary_index + 1 :]) if m is not None)
    return ctx


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


def repair_tool_pairing(
    messages: list[dict[str, Any]], *, repair_trailing: bool = False
) -> list[dict[str, Any]]:
    """Keep the first result per announced tool call, drop orphans, close unanswered calls.

    Only ``toolUse`` turns represent executed calls; an unanswered one gets an error result
    saying it was interrupted, before the next user turn (or at the end with ``repair_trailing``).
    """
    repaired: list[dict[str, Any]] = []
    allowed: set[str] | None = None
    answered: set[str] = set()
    pending: list[tuple[str, str]] = []
    pending_ts: Any = 0

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
            pending = calls if message.get("stopReason") == "toolUse" else []
            allowed = {call_id for call_id, _ in calls}
            pending_ts = message.get("timestamp", 0)
            repaired.append(message)
        elif role == "toolResult":
            call_id = message.get("toolCallId")
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


# -- transcript grammar (§4.2) ---------------------------------------------------------------------
Mode = Literal["compacted", "retained"]


def _append_text(chunks: list[dict[str, Any]], text: str) -> None:
    if not text:
        return
    if chunks and chunks[-1].get("type") == "text":
        chunks[-1]["text"] += text
    else:
        chunks.append({"type": "text", "text": text})


def _content_chunks(content: Any, mode: Mode) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    chunks: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            _append_text(chunks, block["text"])
        elif block.get("type") == "image":
            if mode == "retained":
                if chunks:
                    _append_text(chunks, "\n")
                chunks.append(dict(block))
            else:
                needs_break = (
                    bool(chunks)
                    and chunks[-1].get("type") == "text"
                    and not chunks[-1]["text"].endswith("\n")
                )
                _append_text(chunks, ("\n" if needs_break else "") + "[image]\n")
    if chunks and chunks[-1].get("type") == "text" and chunks[-1]["text"].endswith("\n"):
        chunks[-1]["text"] = chunks[-1]["text"][:-1]
    return chunks


def _truncate_tool_text(text: str) -> str:
    if len(text) <= TOOL_RESULT_MAX_CHARS:
        return text
    rest = len(text) - TOOL_RESULT_MAX_CHARS
    return f"{text[:TOOL_RESULT_MAX_CHARS]}\n\n[... {rest} more characters truncated]"


def _js_json(value: Any) -> str:
    """``JSON.stringify`` spelling: compact separators, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def serialize_transcript(messages: list[dict[str, Any]], mode: Mode = "compacted") -> list[dict[str, Any]]:
    """Provider messages → transcript chunks in the ``[User]: …`` section grammar.

    ``compacted``: images become ``[image]`` lines and tool results are cut at 16000 chars.
    ``retained``: full tool text, images kept as image blocks in place.
    """
    chunks: list[dict[str, Any]] = []

    def section(header: str, body: list[dict[str, Any]]) -> None:
        if not any(c.get("type") != "text" or c.get("text") for c in body):
            return
        _append_text(chunks, ("\n\n" if chunks else "") + header)
        for chunk in body:
            if chunk.get("type") == "text":
                _append_text(chunks, chunk["text"])
            else:
                chunks.append(chunk)

    for message in messages:
        role = message.get("role")
        if role == "user":
            section("[User]: ", _content_chunks(message.get("content"), mode))
        elif role == "assistant":
            text, thinking, calls = [], [], []
            for block in message.get("content") or []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text":
                    text.append(str(block.get("text", "")))
                elif block.get("type") == "thinking":
                    thinking.append(str(block.get("thinking", "")))
                elif block.get("type") == "toolCall":
                    args = block.get("arguments") if isinstance(block.get("arguments"), dict) else {}
                    rendered = ", ".join(f"{k}={_js_json(v)}" for k, v in args.items())
                    calls.append(f"{block.get('name')}({rendered})")
            if thinking:
                section("[Assistant thinking]: ", [{"type": "text", "text": "\n".join(thinking)}])
            if text:
                section("[Assistant]: ", [{"type": "text", "text": "\n".join(text)}])
            if calls:
                section("[Assistant tool calls]: ", [{"type": "text", "text": "; ".join(calls)}])
        elif role == "toolResult":
            body = _content_chunks(message.get("content"), mode)
            if mode == "compacted":
                for chunk in body:
                    if chunk.get("type") == "text":
                        chunk["text"] = _truncate_tool_text(chunk["text"])
            section("[Tool result]: ", body)
    return chunks


def serialize_conversation(messages: list[dict[str, Any]]) -> str:
    """The compacted transcript text of provider messages (what compaction numbers and ranks)."""
    return "".join(c["text"] for c in serialize_transcript(messages, "compacted") if c.get("type") == "text")
