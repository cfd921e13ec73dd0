"""kit/llm/sse.py reads a stream exactly as httpx_sse (the reference) does, however the bytes are cut.

The reference runs for real: an ``httpx.Response`` streaming the same chunks through
``httpx_sse.EventSource(...).aiter_sse()`` (httpx's UTF-8 text decoding, httpx_sse's line splitter
and field parser). Hostile streams: every line end (LF, CR, CRLF, split across chunks), comments,
unknown fields, fields without a colon, ``retry`` that is no number, NUL in an id, a BOM, broken
and cut UTF-8, arbitrary bytes.
"""

from __future__ import annotations

import asyncio
import itertools
import time

import httpx
import pytest
from httpx_sse import EventSource
from hypothesis import given, settings
from hypothesis import strategies as st

from atomic_host.kit.llm.http import _as_utf8
from atomic_host.kit.llm.sse import LINE_COST, LineTooLong, SSEDecoder

PIECES = [
    b"data:", b"data: ", b"data", b"event:", b"event: ", b"id:", b"id: ", b"retry:", b"retry: ", b":", b" ",
    b"\r", b"\n", b"\r\n", b"\n\n", b"\r\r", b"x", b"hello", b"{\"a\":1}", b"\x00", b"12", b"-3", b"1_0",
    b"\xe2\x82\xac", b"\xe2\x82", b"\xac", b"\xff", b"\xef\xbb\xbf", "é✓".encode(), b"\xf0\x9f\x98", b"\x80",
    b"message", b"ping", b"[DONE]", b"\t", "\u2028".encode(), b"\x85",
]  # fmt: skip


async def _reference(chunks: list[bytes]) -> list[tuple[str, str]]:
    async def body():
        for chunk in chunks:
            yield chunk

    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body())
    return [(sse.event, sse.data) for sse in [s async for s in EventSource(response).aiter_sse()]]


def _ours(chunks: list[bytes]) -> list[tuple[str, str]]:
    decoder = SSEDecoder()
    return [pair for chunk in chunks for pair in decoder.feed(chunk)]


def _cut(stream: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(stream) + 1) for c in cuts} | {0, len(stream)})
    return [stream[a:b] for a, b in itertools.pairwise(points)]


streams = st.lists(st.one_of(st.sampled_from(PIECES), st.binary(max_size=6)), max_size=40).map(b"".join)


@settings(max_examples=600, deadline=None)
@given(streams, st.lists(st.integers(min_value=0, max_value=10_000), max_size=12))
def test_the_decoder_reads_what_httpx_sse_reads(stream: bytes, cuts: list[int]) -> None:
    chunks = _cut(stream, cuts)
    assert _ours(chunks) == asyncio.run(_reference(chunks))


@settings(max_examples=200, deadline=None)
@given(streams)
def test_byte_by_byte_equals_whole(stream: bytes) -> None:
    whole = _ours([stream])
    assert _ours([stream[i : i + 1] for i in range(len(stream))]) == whole
    assert whole == asyncio.run(_reference([stream]))


def test_the_usual_frames() -> None:
    stream = (
        b"event: message_start\ndata: {\"a\":1}\n\n"
        b": keep-alive\r\n\r\n"
        b"data: line one\r\ndata: line two\r\n\r\n"
        b"id: 7\rretry: 10\rdata:x\r\r"
        b"data: [DONE]\n\n"
        b"data: cut off without a blank line"
    )
    expected = [
        ("message_start", '{"a":1}'),
        ("message", "line one\nline two"),
        ("message", "x"),
        ("message", "[DONE]"),
    ]
    for size in (1, 2, 3, 7, len(stream)):
        chunks = [stream[i : i + size] for i in range(0, len(stream), size)]
        assert _ours(chunks) == expected
        assert asyncio.run(_reference(chunks)) == expected


def _long_line_seconds(size: int, read: int = 4096) -> float:
    """CPU time to decode one event whose data line is ``size`` bytes, arriving ``read`` bytes at a
    time (a server's big final event, e.g. OpenAI Responses' ``response.completed``)."""
    import time

    stream = b"data: " + b"x" * size + b"\n\n"
    decoder = SSEDecoder()
    t0 = time.process_time()
    events = [e for i in range(0, len(stream), read) for e in decoder.feed(stream[i : i + read])]
    seconds = time.process_time() - t0
    assert events == [("message", "x" * size)]
    return seconds


def test_a_long_line_costs_linear_time_in_its_size() -> None:
    """100 KB, ×10 and ×100 in 4 KB reads: the line's start is kept as its chunks and joined once
    at its end (joining on every read copied the line so far each time: 10 MB took 4.3 s)."""
    small = max(_long_line_seconds(100_000), 0.002)
    big = _long_line_seconds(10_000_000)
    assert big < 2, f"10 MB took {big:.2f} s"  # ~40 ms here
    assert big < 300 * small, (small, big)  # ×100 the input: about ×100 the time, not ×10,000


def _bounded(chunks: list[bytes], limit: int) -> tuple[list[tuple[str, str]], bool]:
    """(the pairs a decoder bounded at ``limit`` gave, whether it refused a line or event), checking
    after every chunk that it holds at most ``limit`` bytes of an unfinished line."""
    decoder = SSEDecoder(limit)
    pairs: list[tuple[str, str]] = []
    for chunk in chunks:
        try:
            pairs += decoder.feed(chunk)
        except LineTooLong as exc:
            assert str(exc) in (f"line longer than {limit} bytes", f"event longer than {limit} bytes")
            return pairs, True
        assert decoder._buffered <= limit and sum(map(len, decoder._buffer)) == decoder._buffered
    return pairs, False


@settings(max_examples=400, deadline=None)
@given(streams, st.lists(st.integers(min_value=0, max_value=10_000), max_size=12), st.integers(1, 40))
def test_the_bound_refuses_long_lines_and_changes_nothing_else(stream: bytes, cuts: list[int], limit: int) -> None:
    chunks = _cut(stream, cuts)
    pairs, refused = _bounded(chunks, limit)
    longest = max(map(len, stream.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")))
    if longest > limit:
        assert refused  # a line over the bound is always refused, wherever the chunks are cut
    whole = _ours(chunks)
    if refused:
        assert pairs == whole[: len(pairs)]  # what came before the refusal is what it always was
    else:
        assert pairs == whole


def test_an_endless_line_or_event_is_refused_at_the_bound() -> None:
    for piece, what in ((b"A" * 1000, "line"), (b"data: " + b"x" * 994 + b"\n", "event")):
        decoder = SSEDecoder(100_000)
        fed = 0
        with pytest.raises(LineTooLong, match=what):
            while fed < 10_000_000:
                decoder.feed(piece)
                fed += len(piece)
        # refused as soon as the bound was passed, not later (an event's lines count LINE_COST more each)
        assert 100_000 * 1000 // (1000 + LINE_COST) <= fed <= 101_000
        assert decoder._buffer == [] and decoder._data == []  # and nothing kept


def test_bounded_cost_is_linear_at_10x_and_100x() -> None:
    """Events of short data lines (the per-line count is the bound's only work on the hot path)."""
    frame = b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":\"ab\"}\n\n"

    def cpu(count: int) -> float:
        decoder = SSEDecoder()
        chunks = [frame * 50] * (count // 50)
        start = time.process_time()
        for chunk in chunks:
            decoder.feed(chunk)
        return time.process_time() - start

    times = {n: min(cpu(n) for _ in range(3)) for n in (2_000, 20_000, 200_000)}
    assert times[20_000] < 25 * times[2_000] + 0.02, times
    assert times[200_000] < 250 * times[2_000] + 0.2, times


async def _charset_reference(chunks: list[bytes], charset: str) -> list[tuple[str, str]]:
    async def body():
        for chunk in chunks:
            yield chunk

    ctype = f"text/event-stream; charset={charset}"
    response = httpx.Response(200, headers={"content-type": ctype}, content=body())
    return [(sse.event, sse.data) for sse in [s async for s in EventSource(response).aiter_sse()]]


async def _charset_ours(chunks: list[bytes], charset: str) -> list[tuple[str, str]]:
    async def body():
        for chunk in chunks:
            yield chunk

    decoder = SSEDecoder()
    return [pair async for chunk in _as_utf8(body(), charset) for pair in decoder.feed(chunk)]


@settings(max_examples=200, deadline=None)
@given(streams, st.lists(st.integers(min_value=0, max_value=10_000), max_size=8),
       st.sampled_from(["iso-8859-1", "cp1252", "utf-16-le", "shift_jis"]))  # fmt: skip
def test_a_stream_in_another_charset_reads_as_httpx_sse_reads_it(stream: bytes, cuts: list[int], charset: str) -> None:
    """A declared charset other than UTF-8 is decoded as httpx decodes it, then read by the same
    (bounded) decoder: the events are httpx_sse's."""
    chunks = _cut(stream, cuts)
    assert asyncio.run(_charset_ours(chunks, charset)) == asyncio.run(_charset_reference(chunks, charset))
