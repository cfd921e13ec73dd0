"""The transcript grammar (semantics §4.2): provider messages as ``[User]: …`` sections.

What compaction numbers and ranks, what summaries are written from, and how a compaction
boundary carries its retained tail.
"""

from __future__ import annotations

import json
from typing import Any, Literal

TOOL_RESULT_MAX_CHARS = 16_000
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
