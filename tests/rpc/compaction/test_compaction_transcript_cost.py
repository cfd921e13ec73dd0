"""The compaction transcript: the same chunks as the first version, for any messages, with work that
grows linearly in the number of messages (the text was grown with ``chunk["text"] += text``, a copy
of the transcript so far per piece: 3,000 messages took 1.4 s, 30,000 three minutes)."""

from __future__ import annotations

import json
import time
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from atomic_host.kit.transcript import serialize_conversation, serialize_transcript


def _reference_append(chunks: list[dict[str, Any]], text: str) -> None:
    if not text:
        return
    if chunks and chunks[-1].get("type") == "text":
        chunks[-1]["text"] += text
    else:
        chunks.append({"type": "text", "text": text})


def _reference_content(content: Any, mode: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    chunks: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            _reference_append(chunks, block["text"])
        elif block.get("type") == "image":
            if mode == "retained":
                if chunks:
                    _reference_append(chunks, "\n")
                chunks.append(dict(block))
            else:
                last = chunks[-1] if chunks else {}
                needs_break = last.get("type") == "text" and not last["text"].endswith("\n")
                _reference_append(chunks, ("\n" if needs_break else "") + "[image]\n")
    if chunks and chunks[-1].get("type") == "text" and chunks[-1]["text"].endswith("\n"):
        chunks[-1]["text"] = chunks[-1]["text"][:-1]
    return chunks


def reference_transcript(messages: list[dict[str, Any]], mode: str = "compacted") -> list[dict[str, Any]]:
    """``serialize_transcript`` as it was first written (the definition the fast one is held to)."""
    chunks: list[dict[str, Any]] = []

    def section(header: str, body: list[dict[str, Any]]) -> None:
        if not any(c.get("type") != "text" or c.get("text") for c in body):
            return
        _reference_append(chunks, ("\n\n" if chunks else "") + header)
        for chunk in body:
            if chunk.get("type") == "text":
                _reference_append(chunks, chunk["text"])
            else:
                chunks.append(chunk)

    for message in messages:
        role = message.get("role")
        if role == "user":
            section("[User]: ", _reference_content(message.get("content"), mode))
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
                    rendered = ", ".join(
                        f"{k}={json.dumps(v, ensure_ascii=False, separators=(',', ':'))}" for k, v in args.items()
                    )
                    calls.append(f"{block.get('name')}({rendered})")
            if thinking:
                section("[Assistant thinking]: ", [{"type": "text", "text": "\n".join(thinking)}])
            if text:
                section("[Assistant]: ", [{"type": "text", "text": "\n".join(text)}])
            if calls:
                section("[Assistant tool calls]: ", [{"type": "text", "text": "; ".join(calls)}])
        elif role == "toolResult":
            body = _reference_content(message.get("content"), mode)
            if mode == "compacted":
                for chunk in body:
                    if chunk.get("type") == "text" and len(chunk["text"]) > 16_000:
                        rest = len(chunk["text"]) - 16_000
                        chunk["text"] = f"{chunk['text'][:16_000]}\n\n[... {rest} more characters truncated]"
            section("[Tool result]: ", body)
    return chunks


_texts = st.sampled_from(["", "\n", "a", "a\n", "two words", "x\n\ny"]) | st.text(max_size=12)
_blocks = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _texts),
    st.builds(lambda d: {"type": "image", "data": d, "mimeType": "image/png"}, st.sampled_from(["AA", "BB"])),
    st.builds(lambda t: {"type": "thinking", "thinking": t}, _texts),
    st.builds(lambda n, a: {"type": "toolCall", "name": n, "arguments": a}, st.sampled_from(["bash", "read"]),
              st.dictionaries(st.sampled_from(["path", "command"]), _texts, max_size=2)),
    st.just("not a block"),
)
_messages = st.lists(
    st.builds(
        lambda role, content: {"role": role, "content": content},
        st.sampled_from(["user", "assistant", "toolResult", "custom"]),
        st.lists(_blocks, max_size=5) | _texts,
    ),
    max_size=8,
)


@settings(max_examples=500)
@given(messages=_messages, mode=st.sampled_from(["compacted", "retained"]))
def test_the_transcript_equals_the_reference(messages: list[dict[str, Any]], mode: str) -> None:
    assert serialize_transcript(messages, mode) == reference_transcript(messages, mode)  # type: ignore[arg-type]


def _long_session(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for _ in range(turns):
        messages.append({"role": "user", "content": [{"type": "text", "text": "q" * 300}]})
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "a" * 300},
                    {"type": "toolCall", "name": "bash", "arguments": {"command": "ls"}},
                ],
            }
        )
        messages.append({"role": "toolResult", "content": [{"type": "text", "text": "r" * 400}]})
    return messages


def _seconds(turns: int) -> float:
    messages = _long_session(turns)
    t0 = time.process_time()
    text = serialize_conversation(messages)
    seconds = time.process_time() - t0
    assert text.count("[User]: ") == turns
    return seconds


def test_a_long_session_costs_linear_time_in_its_length() -> None:
    """100 turns and ×100 (30,000 messages, 10 MB of transcript): about ×100 the time, not ×10,000
    (the old growth took 1.4 s at 1,000 turns and three minutes at 10,000)."""
    small = max(_seconds(100), 0.002)
    big = _seconds(10_000)
    assert big < 2, f"10,000 turns took {big:.2f} s"  # ~0.1 s here
    assert big < 300 * small, (small, big)
