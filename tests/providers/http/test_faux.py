"""The scripted faux provider: in-process queue, JSONL script file, abort, logging."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import collect, final, types

from atomic_host.contract.providers import StreamOptions
from atomic_host.testing import read_jsonl
from builtin_plugins.providers import faux, faux_model

CTX = {"systemPrompt": "sys", "messages": [{"role": "user", "content": "hello", "timestamp": 1}], "tools": []}


@pytest.fixture(autouse=True)
def clean(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("ATOMIC_FAUX_SCRIPT", raising=False)
    monkeypatch.delenv("ATOMIC_FAUX_LOG", raising=False)
    faux.reset()
    yield
    faux.reset()


async def test_text_step_streams_in_chunks() -> None:
    text = "The quick brown fox jumps over the lazy dog, twice over."
    faux.push(text)
    events = await collect(faux.stream(faux_model(), CTX, StreamOptions()))
    deltas = [e["delta"] for e in events if e["type"] == "text_delta"]
    assert len(deltas) > 2 and "".join(deltas) == text
    msg = final(events)
    assert msg["content"] == [{"type": "text", "text": text}]
    assert (msg["stopReason"], msg["provider"], msg["model"], msg["api"]) == (
        "stop",
        "faux",
        "faux-1",
        "faux",
    )
    assert msg["usage"]["output"] == -(-len(text) // 4) and msg["usage"]["input"] > 0
    assert msg["usage"]["cost"]["total"] == 0
    assert faux.faux.call_count == 1 and faux.faux.last_context is CTX


async def test_blocks_tool_call_and_stop_reason() -> None:
    faux.push(
        {
            "content": [
                {"type": "thinking", "thinking": "I should list files."},
                {"type": "text", "text": "Listing."},
                {"type": "toolCall", "name": "ls", "arguments": {"path": ".", "long": True}, "id": "c1"},
            ],
            "usage": {"input": 10, "output": 3},
        }
    )
    events = await collect(faux.stream(faux_model(), CTX, StreamOptions()))
    assert types(events)[:2] == ["start", "thinking_start"]
    msg = final(events)
    assert events[-1]["reason"] == "toolUse"
    assert msg["content"][2] == {
        "type": "toolCall",
        "id": "c1",
        "name": "ls",
        "arguments": {"path": ".", "long": True},
    }
    assert (msg["usage"]["input"], msg["usage"]["output"], msg["usage"]["totalTokens"]) == (10, 3, 13)


async def test_scripted_error_and_empty_script() -> None:
    faux.push({"content": "partial", "stopReason": "error", "errorMessage": "529 overloaded_error"})
    events = await collect(faux.stream(faux_model(), CTX, StreamOptions()))
    assert final(events)["errorMessage"] == "529 overloaded_error" and events[-1]["reason"] == "error"
    events = await collect(faux.stream(faux_model(), CTX, StreamOptions()))
    assert types(events) == ["error"] and final(events)["errorMessage"] == (
        "No more faux responses queued: ATOMIC_FAUX_SCRIPT is not set "
        '(point it at a JSONL file with one reply per line, e.g. "hello")'
    )
    assert faux.faux.call_count == 2


async def test_file_script_is_reread_and_log_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script, log = tmp_path / "script.jsonl", tmp_path / "log.jsonl"
    script.write_text(json.dumps("one") + "\n")
    monkeypatch.setenv("ATOMIC_FAUX_SCRIPT", str(script))
    monkeypatch.setenv("ATOMIC_FAUX_LOG", str(log))
    opts = StreamOptions(reasoning="high", max_tokens=100)
    assert final(await collect(faux.stream(faux_model(), CTX, opts)))["content"][0]["text"] == "one"
    with script.open("a") as fh:  # appended while "the host runs"
        fh.write(json.dumps({"content": [{"type": "text", "text": "two"}], "stopReason": "length"}) + "\n")
    assert faux.faux.pending_count() == 1
    second = await collect(faux.stream(faux_model(), CTX, opts))
    assert final(second)["content"][0]["text"] == "two" and second[-1]["reason"] == "length"
    third = await collect(faux.stream(faux_model(), CTX, opts))
    assert final(third)["errorMessage"] == "No more faux responses queued"
    lines = read_jsonl(log)
    assert len(lines) == 3
    assert lines[0]["context"] == CTX and lines[0]["options"]["reasoning"] == "high"
    assert lines[0]["options"]["max_tokens"] == 100


async def test_queue_takes_precedence_over_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "s.jsonl"
    script.write_text('"from file"\nnot json\n')
    monkeypatch.setenv("ATOMIC_FAUX_SCRIPT", str(script))
    faux.push("from queue")
    texts = [final(await collect(faux.stream(faux_model(), CTX, StreamOptions()))) for _ in range(3)]
    assert texts[0]["content"][0]["text"] == "from queue"
    assert texts[1]["content"][0]["text"] == "from file"
    assert texts[2]["errorMessage"].startswith("faux: Invalid faux script line 2")


async def test_abort_during_delay_and_between_chunks() -> None:
    faux.push({"content": "never", "delayMs": 5000})
    signal = asyncio.Event()
    asyncio.get_running_loop().call_later(0.1, signal.set)
    events = await collect(faux.stream(faux_model(), CTX, StreamOptions(signal=signal)))
    assert types(events) == ["error"] and final(events)["stopReason"] == "aborted"
    assert final(events)["errorMessage"] == "Request was aborted"

    faux.push({"content": "x" * 400, "chunkDelayMs": 1})
    signal = asyncio.Event()
    events = []
    async for ev in faux.stream(faux_model(), CTX, StreamOptions(signal=signal)):
        events.append(ev)
        if ev["type"] == "text_delta":
            signal.set()
    msg = final(events)
    assert msg["stopReason"] == "aborted" and len(msg["content"][0]["text"]) < 400
