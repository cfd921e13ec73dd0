"""``drive`` reads a stream a network read at a time (``sse_batches``: the pairs one read
completed), and must behave as when each pair was waited for on its own: the abort signal is
checked before every pair after a batch's first, a terminal event ends the stream at once, and a
parser given as the function that makes it is made when the stream is first read. End to end, a
burst of deltas in one read streams the same events as the same deltas one per read."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from atomic_host.contract.providers import StreamOptions
from atomic_host.kit.llm import http
from atomic_host.kit.llm.abort import AbortSignal
from atomic_host.kit.llm.http import OPEN, WireParser, drive, sse_events
from atomic_host.kit.llm.stream import AssistantStream
from atomic_host.testing_sse import SSEServer, openai_chat_frames
from builtin_plugins.providers import openai_completions

MODEL = {"id": "m1", "api": "openai-completions", "provider": "local", "baseUrl": "http://127.0.0.1:9"}


class _Parser(WireParser):
    """Text deltas from ``{"t": ...}`` frames; ``{"abort": true}`` sets the signal; ``[DONE]`` ends."""

    def __init__(self, signal: asyncio.Event) -> None:
        super().__init__(AssistantStream(MODEL))
        self.signal = signal
        self.index: int | None = None

    def request(self) -> tuple[str, dict[str, str], dict[str, Any]]:
        return "http://127.0.0.1:9/x", {}, {}

    def on_event(self, event: str, data: str) -> list[dict[str, Any]]:
        if data == "[DONE]":
            return [*self.out.end_open_blocks(), self.out.done()]
        frame = json.loads(data)
        if frame.get("abort"):
            self.signal.set()
            return []
        events = []
        if self.index is None:
            self.index, start = self.out.text_start()
            events.append(start)
        return [*events, self.out.text_delta(self.index, frame["t"])]


def _batches(*batches: list[tuple[str, str]]) -> Any:
    async def fake(url: str, headers: dict[str, str], body: Any, options: StreamOptions) -> AsyncIterator[Any]:
        yield OPEN
        for batch in batches:
            yield batch

    return fake


def _pair(frame: Any) -> tuple[str, str]:
    return "message", frame if isinstance(frame, str) else json.dumps(frame)


async def _kinds(parser: Any, options: StreamOptions) -> list[str]:
    out = []
    async with contextlib.aclosing(drive(parser, options)) as events:
        async for event in events:
            out.append(event["type"] + (f":{event['delta']}" if "delta" in event else ""))
    return out


@pytest.mark.parametrize("signal_type", [AbortSignal, asyncio.Event])
async def test_an_abort_set_while_a_batch_is_read_stops_before_its_next_pair(
    monkeypatch: pytest.MonkeyPatch, signal_type: type[asyncio.Event]
) -> None:
    signal = signal_type()
    batch = [_pair({"t": "a"}), _pair({"abort": True}), _pair({"t": "b"}), _pair("[DONE]")]
    monkeypatch.setattr(http, "sse_batches", _batches(batch))
    kinds = await _kinds(_Parser(signal), StreamOptions(signal=signal))
    assert kinds == ["start", "text_start", "text_delta:a", "error"]


async def test_pairs_of_a_batch_stream_in_order_and_a_terminal_event_ends_it(monkeypatch: pytest.MonkeyPatch) -> None:
    signal = AbortSignal()
    first = [_pair({"t": "a"}), _pair({"t": "b"})]
    second = [_pair({"t": "c"}), _pair("[DONE]"), _pair({"t": "after the end"})]
    monkeypatch.setattr(http, "sse_batches", _batches(first, second, [_pair({"t": "never read"})]))
    kinds = await _kinds(lambda: _Parser(signal), StreamOptions(signal=signal))
    assert kinds == ["start", "text_start", "text_delta:a", "text_delta:b", "text_delta:c", "text_end", "done"]


async def test_a_parser_that_cannot_be_made_raises_when_the_stream_is_read() -> None:
    def broken() -> WireParser:
        raise KeyError("compat")

    events = drive(broken, StreamOptions())  # making the generator makes no parser yet
    with pytest.raises(KeyError):
        await events.__anext__()


def _chunk(content: str | None = None, finish: str | None = None) -> dict[str, Any]:
    delta = {} if content is None else {"content": content}
    return {"id": "c1", "object": "chat.completion.chunk", "model": "m1",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip


async def _reply_events(frames: list[Any]) -> list[Any]:
    with SSEServer() as server:
        server.enqueue(frames)
        model = {**MODEL, "baseUrl": server.base_url}
        out = []
        stream = openai_completions.stream(model, {"messages": []}, StreamOptions(signal=AbortSignal()))
        async with contextlib.aclosing(stream) as events:
            async for event in events:
                out.append({k: v for k, v in event.items() if k not in ("partial", "message")})
        return out


async def test_a_burst_in_one_read_streams_as_the_same_deltas_one_per_read() -> None:
    chunks = [_chunk(""), *[_chunk(f"tok{i} ") for i in range(30)], _chunk(finish="stop")]
    frames = openai_chat_frames(chunks)
    one_per_read = await _reply_events([(0.002, f) for f in frames])
    burst = await _reply_events(["".join(frames)])
    assert burst == one_per_read
    assert [e["type"] for e in burst].count("text_delta") == 30 and burst[-1]["type"] == "done"


async def test_sse_events_yields_pairs_and_checks_the_signal_before_each(monkeypatch: pytest.MonkeyPatch) -> None:
    signal = AbortSignal()
    monkeypatch.setattr(http, "sse_batches", _batches([_pair({"t": "a"}), _pair({"t": "b"})], [_pair({"t": "c"})]))
    seen = []
    with pytest.raises(http.StreamAborted):
        async for pair in sse_events("u", {}, {}, StreamOptions(signal=signal)):
            seen.append(pair)
            if len(seen) == 2:
                signal.set()
    assert seen == [OPEN, _pair({"t": "a"})]
