"""Shared helpers of the streaming-cost tests: the old per-character string repair and the old
order of the partial parse (the reference models the fast versions must equal), a tool-call
argument of a given size, and Anthropic / OpenAI Chat SSE replies that stream it in small fragments
as real models do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from atomic_host import testing_sse as sse

HERE = Path(__file__).parent
_VALID_ESCAPES = frozenset('"\\/bfnrtu')
_CONTROL = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def reference_repair(text: str) -> str:
    """The string repair as it was written first: one character at a time (quadratic use made it slow,
    but its answers are the definition the fast version is held to)."""
    out: list[str] = []
    in_string = False
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if not in_string:
            out.append(ch)
            in_string = ch == '"'
        elif ch == '"':
            out.append(ch)
            in_string = False
        elif ch == "\\":
            nxt = text[i + 1] if i + 1 < n else ""
            if nxt == "":
                out.append(ch)
            elif nxt in _VALID_ESCAPES:
                out.append(ch + nxt)
                i += 1
            else:
                out.append("\\\\")
        elif ch < " ":
            out.append(_CONTROL.get(ch) or f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def reference_parse(text: str | None) -> dict[str, Any]:
    """parse_streaming_json as it was first written: the repaired text before the partial parse
    (every escape of a partial argument went through the repair's Python callback); its answers
    are the definition the reordered version is held to."""
    from atomic_host.kit.llm.json_parse import _partial, repair_json_strings

    if not text or not text.strip():
        return {}
    try:
        value = json.loads(text)
        return value if isinstance(value, dict) else {}
    except ValueError:
        pass
    repaired = repair_json_strings(text)
    if repaired != text:
        try:
            value = json.loads(repaired)
            return value if isinstance(value, dict) else {}
        except ValueError:
            pass
    for candidate in (text, repaired) if repaired != text else (text,):
        try:
            value = _partial(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return {}


def file_body(size: int) -> str:
    """``size`` characters of source-like text: quotes, backslashes, tabs, non-ASCII, newlines."""
    line = 'print("value \\"%s\\"" % x)\t# café ✓ \\n\n'
    return (line * (size // len(line) + 1))[:size]


def write_arguments(size: int) -> tuple[str, str]:
    """(the file body, the JSON arguments of a ``write`` call that writes it to ``big.txt``)."""
    body = file_body(size)
    return body, json.dumps({"path": "big.txt", "content": body})


def fragments(text: str, size: int = 40) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _anthropic_text_block(message_id: str, text: str) -> list[dict[str, Any]]:
    """``message_start`` and a whole text block at index 0."""
    usage = {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1}
    message = {"id": message_id, "type": "message", "role": "assistant", "model": "m1", "content": [],
               "stop_reason": None, "usage": usage}  # fmt: skip
    return [
        {"type": "message_start", "message": message},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 0},
    ]


def anthropic_write_reply(arguments: str, fragment: int = 40) -> Any:
    """An Anthropic Messages stream: a short text, then a ``write`` tool_use whose input arrives as
    ``input_json_delta`` fragments of ``fragment`` characters, stop reason ``tool_use``."""
    tool = {"type": "tool_use", "id": "toolu_big", "name": "write", "input": {}}
    events = _anthropic_text_block("msg_big", "Writing it.")
    events.append({"type": "content_block_start", "index": 1, "content_block": tool})
    events += [
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": part}}
        for part in fragments(arguments, fragment)
    ]
    events += [
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5000}},
        {"type": "message_stop"},
    ]
    return sse.Reply(chunks=sse.anthropic_frames(events))


def anthropic_text_reply(text: str) -> Any:
    events = _anthropic_text_block("msg_done", text)
    events += [
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}},
        {"type": "message_stop"},
    ]
    return sse.Reply(chunks=sse.anthropic_frames(events))


def openai_chat_write_reply(arguments: str, fragment: int = 40) -> Any:
    """An OpenAI Chat Completions stream of one ``write`` function call in ``fragment``-character pieces."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-big",
            "object": "chat.completion.chunk",
            "model": "m1",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    chunks = [
        chunk(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"index": 0, "id": "call_big", "type": "function", "function": {"name": "write", "arguments": ""}}
                ],
            }
        )
    ]
    chunks += [
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": part}}]})
        for part in fragments(arguments, fragment)
    ]
    chunks.append(chunk({}, "tool_calls"))
    return sse.Reply(chunks=sse.openai_chat_frames(chunks))


def write_models(agent_dir: Path, base_url: str, api: str) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    model = {"id": "m1", "contextWindow": 2_000_000, "maxTokens": 1_000_000, "cost": {"input": 1, "output": 2}}
    provider = {"baseUrl": base_url, "api": api, "apiKey": "fixture-key-123", "models": [model]}
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"vendor": provider}}))
