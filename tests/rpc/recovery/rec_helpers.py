"""Helpers of the recovery tests: a provider at a local SSE server, crashing a host, reading
what the model was sent and what the session file holds."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from suite_paths import VENDOR_FIXTURES

from atomic_host import testing_sse as sse

QUIET: dict[str, Any] = {"sessionSummary": {"enabled": False}, "retry": {"enabled": False}}
MODEL = ("--model", "main/m-main")
ANTHROPIC = VENDOR_FIXTURES / "anthropic"


def provider(agent_dir: Path, base_url: str) -> None:
    """models.json with the provider ``main`` (model m-main, Anthropic Messages) at ``base_url``."""
    model = {"id": "m-main", "contextWindow": 200000, "maxTokens": 32000, "cost": {"input": 1, "output": 2}}
    main = {"baseUrl": base_url, "api": "anthropic-messages", "apiKey": "fixture-key-123", "models": [model]}
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"main": main}}))


def answer(delay: float = 0.0) -> sse.Reply:
    """A whole answer ("All done."); ``delay``: seconds before its first chunk."""
    data = (ANTHROPIC / "answer.sse").read_bytes()
    chunks: list[sse.Chunk] = [data[i : i + 64] for i in range(0, len(data), 64)]
    if delay:
        chunks[0] = (delay, chunks[0])
    return sse.Reply(chunks=chunks)


def stalled() -> sse.Reply:
    """An answer that starts and then never ends: the host stays streaming."""
    data = (ANTHROPIC / "answer.sse").read_bytes()
    return sse.Reply(chunks=[data[:64], data[64:]], stall_after=1)


def user_texts(body: dict[str, Any]) -> list[str]:
    """The user texts of one Anthropic request body, in order."""
    texts = []
    for m in body["messages"]:
        if m.get("role") != "user":
            continue
        content = m["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        texts += [b["text"] for b in blocks if b.get("type") == "text"]
    return texts


async def until(predicate: Any, timeout: float = 20) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError("condition not met")
        await asyncio.sleep(0.05)


async def sigkill(client: Any) -> None:
    """SIGKILL the host: no shutdown hook, no flush, nothing."""
    assert client.proc is not None
    client.proc.kill()
    await client.proc.wait()


def session_files(agent_dir: Path) -> list[Path]:
    return sorted((agent_dir / "sessions").rglob("*.jsonl"))


def file_entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:] if line.strip()]


def journal(path: Path) -> list[dict[str, Any]]:
    """The queue journal records (``data``) of a session file, in order."""
    entries = file_entries(path)
    return [e["data"] for e in entries if e.get("type") == "custom" and e.get("customType") == "atomic.queue"]
