"""Shared helpers for the credential-masking tests: a server that echoes request headers on 401,
SSE replies for the two wire formats, and a scan of everything a host wrote."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from atomic_host import testing_sse as sse

ECHO_401 = sse.Reply(status=401, body="(echo)")
"""Queue this to get a 401 whose JSON body quotes every request header, as some gateways do."""


class EchoServer(sse.SSEServer):
    """The scripted SSE server, plus :data:`ECHO_401` replies built from the request itself."""

    def _handle(self, h: Any) -> None:
        with self._lock:
            echo = bool(self.replies) and self.replies[0] is ECHO_401
            if echo:
                self.replies.popleft()
        if not echo:
            super()._handle(h)
            return
        length = int(h.headers.get("content-length") or 0)
        h.rfile.read(length)
        headers = {k: v for k, v in h.headers.items()}
        with self._lock:
            self.requests.append(sse.RecordedRequest(h.command, h.path, {k.lower(): v for k, v in headers.items()},
                                                     None))
        raw_lines = "".join(f"{k}: {v}\n" for k, v in headers.items())
        data = json.dumps({"error": {"type": "authentication_error", "message": "invalid credentials",
                                     "request_headers": headers, "raw": raw_lines}}).encode()
        h.send_response(401)
        h.send_header("content-type", "application/json")
        h.send_header("content-length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)
        h.wfile.flush()


# -- replies ---------------------------------------------------------------------------------------

def _chat_chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m1", "choices": choices, **extra}


def chat_text(parts: list[str]) -> list[str]:
    """An OpenAI chat-completions text reply streamed as exactly these deltas."""
    return sse.openai_chat_frames([
        _chat_chunk({"role": "assistant", "content": ""}),
        *[_chat_chunk({"content": p}) for p in parts],
        _chat_chunk({}, finish="stop"),
        _chat_chunk(None, usage={"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107}),
    ])


def chat_bash(command: str) -> list[str]:
    """An OpenAI chat-completions reply calling the bash tool."""
    call = {"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": command})}}
    return sse.openai_chat_frames([
        _chat_chunk({"role": "assistant", "content": ""}),
        _chat_chunk({"tool_calls": [call]}),
        _chat_chunk({}, finish="tool_calls"),
        _chat_chunk(None, usage={"prompt_tokens": 100, "completion_tokens": 9, "total_tokens": 109}),
    ])


def _anthropic(blocks: list[dict[str, Any]], deltas: list[list[dict[str, Any]]], stop: str) -> list[str]:
    start = {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                                  "model": "m1", "content": [], "stop_reason": None,
                                                  "usage": {"input_tokens": 100, "output_tokens": 1}}}
    events: list[dict[str, Any]] = [start]
    for i, (block, block_deltas) in enumerate(zip(blocks, deltas, strict=True)):
        events.append({"type": "content_block_start", "index": i, "content_block": block})
        events += [{"type": "content_block_delta", "index": i, "delta": d} for d in block_deltas]
        events.append({"type": "content_block_stop", "index": i})
    events += [{"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 9}},
               {"type": "message_stop"}]
    return sse.anthropic_frames(events)


def anthropic_text(parts: list[str]) -> list[str]:
    """An Anthropic messages text reply streamed as exactly these deltas."""
    return _anthropic([{"type": "text", "text": ""}], [[{"type": "text_delta", "text": p} for p in parts]],
                      "end_turn")


def anthropic_bash(command: str) -> list[str]:
    """An Anthropic messages reply calling the bash tool."""
    block = {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}
    delta = {"type": "input_json_delta", "partial_json": json.dumps({"command": command})}
    return _anthropic([block], [[delta]], "tool_use")


TEXT = {"anthropic-messages": anthropic_text, "openai-completions": chat_text}
BASH = {"anthropic-messages": anthropic_bash, "openai-completions": chat_bash}


# -- what the host wrote ---------------------------------------------------------------------------

def written_files(root: Path, inputs: set[Path]) -> dict[str, bytes]:
    """Every file under ``root`` except the configuration the test wrote (``inputs``), by path."""
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and p.resolve() not in inputs}


def sqlite_rows(db: Path) -> str:
    """Every value of every table of a SQLite store, as text."""
    con = sqlite3.connect(db)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return "\n".join(repr(row) for t in tables for row in con.execute(f'SELECT * FROM "{t}"'))
    finally:
        con.close()


def assert_nowhere(secret: str, **texts: str | bytes) -> None:
    """``secret`` occurs in none of ``texts`` (named, for the failure message)."""
    for name, text in texts.items():
        found = secret.encode() in text if isinstance(text, bytes) else secret in text
        assert not found, f"credential leaked into {name}"
