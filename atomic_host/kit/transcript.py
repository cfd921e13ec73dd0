"""The transcript grammar (semantics §4.2): provider messages as ``[User]: …`` sections.

What compaction numbers and ranks, what summaries are written from, and how a compaction
boundary carries its retained tail.
"""

from __future__ import annotations

import json
from typing import Any, Literal

__all__ = ["serialize_conversation", "serialize_transcript"]

TOOL_RESULT_MAX_CHARS = 16_000
Mode = Literal["compacted", "retained"]


class _Chunks:
    """Transcript chunks being built: the text after the last non-text chunk is kept as pieces
    and joined once, when the next non-text chunk comes or the chunks are read.

    Not ``chunks[-1]["text"] += text``: the dict holds the text, so every append copied the
    transcript so far (3,000 messages took 1.4 s, 30,000 took three minutes)."""

    __slots__ = ("chunks", "pieces")

    def __init__(self) -> None:
        self.chunks: list[dict[str, Any]] = []
        self.pieces: list[str] = []

    def __bool__(self) -> bool:
        return bool(self.chunks or self.pieces)

    def text(self, text: str) -> None:
        if text:
            self.pieces.append(text)

    def other(self, chunk: dict[str, Any]) -> None:
        self._close()
        self.chunks.append(chunk)

    def ends_with_newline(self) -> bool:
        """The last chunk is text ending with a line feed."""
        return bool(self.pieces) and self.pieces[-1].endswith("\n")

    def strip_final_newline(self) -> None:
        if self.ends_with_newline():
            self.pieces[-1] = self.pieces[-1][:-1]

    def done(self) -> list[dict[str, Any]]:
        self._close()
        return self.chunks

    def _close(self) -> None:
        if self.pieces:
            self.chunks.append({"type": "text", "text": "".join(self.pieces)})
            self.pieces = []


def _content_chunks(content: Any, mode: Mode) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    chunks = _Chunks()
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            chunks.text(block["text"])
        elif block.get("type") == "image":
            if mode == "retained":
                if chunks:
                    chunks.text("\n")
                chunks.other(dict(block))
            else:
                needs_break = bool(chunks.pieces) and not chunks.ends_with_newline()
                chunks.text(("\n" if needs_break else "") + "[image]\n")
    chunks.strip_final_newline()
    return chunks.done()


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
    chunks = _Chunks()

    def section(header: str, body: list[dict[str, Any]]) -> None:
        if not any(c.get("type") != "text" or c.get("text") for c in body):
            return
        chunks.text(("\n\n" if chunks else "") + header)
        for chunk in body:
            if chunk.get("type") == "text":
                chunks.text(chunk["text"])
            else:
                chunks.other(chunk)

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
    return chunks.done()


def serialize_conversation(messages: list[dict[str, Any]]) -> str:
    """The compacted transcript text of provider messages (what compaction numbers and ranks)."""
    return "".join(c["text"] for c in serialize_transcript(messages, "compacted") if c.get("type") == "text")
