"""A local Anthropic-style model server for the client's tests: models.json pointing at it, a
streamed text reply with usage, and a reply that stalls mid-stream (the run goes on until aborted)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from atomic_host.testing_sse import Reply, anthropic_frames

MODEL = "local/m1"


def write_models(agent_dir: Path, base_url: str) -> None:
    """models.json with provider ``local`` (model ``m1``, $3 / $15 per million tokens) at ``base_url``."""
    agent_dir.mkdir(parents=True, exist_ok=True)
    providers = {
        "local": {
            "baseUrl": base_url,
            "api": "anthropic-messages",
            "apiKey": "dummy-key",
            "models": [{"id": "m1", "reasoning": False, "cost": {"input": 3, "output": 15}}],
        }
    }
    (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))


def _events(words: list[str], input_tokens: int, output_tokens: int) -> list[dict[str, Any]]:
    start = {
        "type": "message_start",
        "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "m1", "content": [],
                    "stop_reason": None, "usage": {"input_tokens": input_tokens, "output_tokens": 1}},
    }
    deltas = [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": w}} for w in words]
    return [
        start,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        *deltas,
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": output_tokens}},
        {"type": "message_stop"},
    ]


def text_reply(text: str, input_tokens: int = 1000, output_tokens: int = 200) -> list[str]:
    """A whole reply streaming ``text`` word by word, with that usage."""
    words = [w + " " for w in text.split(" ")]
    words[-1] = words[-1].rstrip(" ")
    return anthropic_frames(_events(words, input_tokens, output_tokens))


def stalled_reply(words: int = 3) -> Reply:
    """A reply that streams ``words`` text deltas, then hangs until the client leaves."""
    frames = anthropic_frames(_events([f"w{i} " for i in range(words)], 10, 5))
    return Reply(chunks=frames, stall_after=2 + words)


def tool_reply(name: str, arguments: dict[str, Any], text: str = "Let me check.") -> list[str]:
    """A reply with some text and one ``tool_use`` block (stop reason ``tool_use``)."""
    start = _events([text], 500, 40)[:-3]  # message_start, the text block, up to its deltas
    tool = [
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1,
         "content_block": {"type": "tool_use", "id": "toolu_01", "name": name, "input": {}}},
        {"type": "content_block_delta", "index": 1,
         "delta": {"type": "input_json_delta", "partial_json": json.dumps(arguments)}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 40}},
        {"type": "message_stop"},
    ]
    return anthropic_frames(start + tool)
