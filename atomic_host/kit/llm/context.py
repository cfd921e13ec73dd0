"""Request-side helpers shared by adapters: message replay rules, token estimates, max-token clamps."""

from __future__ import annotations

import json
import re
from typing import Any

from atomic_host.kit.messages import message_text

__all__ = ["clamp_max_tokens", "estimate_context_tokens", "text_of", "transform_messages"]

IMAGE_CHARS = 4800
REPLY_RESERVE_TOKENS = 4096
"""Tokens of the context window a request's ``max_tokens`` never takes (:func:`clamp_max_tokens`)."""
_ID_BAD = re.compile(r"[^a-zA-Z0-9_-]")


def _block_chars(block: dict[str, Any]) -> int:
    kind = block.get("type")
    if kind == "text":
        return len(block.get("text") or "")
    if kind == "thinking":
        return len(block.get("thinking") or "")
    if kind == "toolCall":
        return len(block.get("name") or "") + len(json.dumps(block.get("arguments") or {}))
    if kind == "image":
        return IMAGE_CHARS
    return 0


def message_chars(message: dict[str, Any]) -> int:
    """Characters a message contributes to the prompt (images count 4800)."""
    content = message.get("content")
    if isinstance(content, str):
        return len(content)
    return sum(_block_chars(b) for b in content or [])


def estimate_context_tokens(context: dict[str, Any]) -> int:
    """chars/4 (rounded up) of system prompt, messages and tool definitions."""
    chars = len(context.get("systemPrompt") or "")
    chars += sum(message_chars(m) for m in context.get("messages") or [])
    if context.get("tools"):
        chars += tools_json_chars(context["tools"])
    return -(-chars // 4)


_TOOL_CHARS: dict[int, tuple[Any, str, str, int]] = {}
"""id(parameters schema) → (the schema, kept so the id stays its own; the tool's name and
description; ``len(json.dumps(tool))``)."""
_TOOL_CHARS_MAX = 512


def tools_json_chars(tools: Any) -> int:
    """``len(json.dumps(tools))``, from lengths kept per tool: a tool's ``parameters`` schema is
    the tool's cached dict (``Tool.json_schema``, the same object every request), so a definition
    with the same schema object, name and description is measured once instead of encoding every
    schema on every request (~0.1 ms a request with the built-in tools)."""
    if not tools or type(tools) is not list:
        return len(json.dumps(tools))
    total = 2 * len(tools)  # "[" and "]", and ", " between items (a dict's length is the same in any key order)
    for tool in tools:
        if type(tool) is not dict or len(tool) != 3 or type(schema := tool.get("parameters")) is not dict:
            return len(json.dumps(tools))
        name, description = tool.get("name"), tool.get("description")
        memo = _TOOL_CHARS.get(id(schema))
        if memo is None or memo[0] is not schema or memo[1] != name or memo[2] != description:
            if type(name) is not str or type(description) is not str:
                return len(json.dumps(tools))
            if len(_TOOL_CHARS) >= _TOOL_CHARS_MAX:
                _TOOL_CHARS.clear()
            memo = _TOOL_CHARS[id(schema)] = (schema, name, description, len(json.dumps(tool)))
        total += memo[3]
    return total


def clamp_max_tokens(model: dict[str, Any], context: dict[str, Any], requested: int | None) -> int:
    """Requested (default ``min(model.maxTokens, 32000)``) clamped to the room left in the window."""
    wanted = requested or min(int(model.get("maxTokens") or 32000), 32000)
    window = int(model.get("contextWindow") or 0)
    if window:
        wanted = min(wanted, max(1, window - estimate_context_tokens(context) - REPLY_RESERVE_TOKENS))
    return max(1, wanted)


def normalize_tool_call_id(id_: str) -> str:
    """A tool-call id acceptable to every API: ``[a-zA-Z0-9_-]``, at most 64 chars."""
    return _ID_BAD.sub("_", id_)[:64] or "call"


def text_of(content: Any) -> str:
    """Concatenated text of a string or a list of content blocks, one line per block."""
    return message_text({"content": content}, "\n")


def transform_messages(messages: list[dict[str, Any]], model: dict[str, Any]) -> list[dict[str, Any]]:
    """Prepare stored messages for replay to ``model`` (providers.md §1, transform-messages).

    Skips error/aborted assistant messages; for messages from another provider/api/model turns
    thinking into text (drops empty or redacted thinking) and normalizes tool-call ids (remapping
    their results); adds a synthetic "No result provided" result for tool calls left unanswered.
    """
    out: list[dict[str, Any]] = []
    id_map: dict[str, str] = {}
    pending: list[dict[str, Any]] = []  # tool calls of the last assistant message still unanswered

    def flush_pending() -> None:
        for call in pending:
            out.append(
                {
                    "role": "toolResult",
                    "toolCallId": call["id"],
                    "toolName": call.get("name", ""),
                    "content": [{"type": "text", "text": "No result provided"}],
                    "isError": True,
                    "timestamp": 0,
                }
            )
        pending.clear()

    for msg in messages:
        role = msg.get("role")
        if role == "assistant":
            flush_pending()
            if msg.get("stopReason") in ("error", "aborted"):
                continue
            same = (
                msg.get("provider") == model.get("provider")
                and msg.get("api") == model.get("api")
                and msg.get("model") == model.get("id")
            )
            blocks: list[dict[str, Any]] = []
            for block in msg.get("content") or []:
                kind = block.get("type")
                if kind == "thinking" and not same:
                    if block.get("redacted") or not (block.get("thinking") or "").strip():
                        continue
                    blocks.append({"type": "text", "text": block["thinking"]})
                elif kind == "toolCall":
                    call = dict(block)
                    if not same:
                        new_id = normalize_tool_call_id(call["id"])
                        id_map[call["id"]] = new_id
                        call["id"] = new_id
                        call.pop("thoughtSignature", None)
                    blocks.append(call)
                    pending.append(call)
                else:
                    blocks.append(block)
            out.append({**msg, "content": blocks})
        elif role == "toolResult":
            call_id = id_map.get(msg.get("toolCallId", ""), msg.get("toolCallId", ""))
            pending[:] = [c for c in pending if c["id"] != call_id]
            out.append({**msg, "toolCallId": call_id})
        else:
            flush_pending()
            out.append(msg)
    flush_pending()
    return out
