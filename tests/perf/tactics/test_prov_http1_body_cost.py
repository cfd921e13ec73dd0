"""kit/_fast/http1.py's chunked body reader: reads that cannot end an unfinished chunk header or
trailer block are held, not joined and searched again, with the same results as searching every
read, and work that grows linearly in the header's or trailer's size.

``test_prov_http1.py`` holds the whole reader to httpx on hostile bytes in a few reads; here the
bytes come a few at a time, which is where holding happens."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from atomic_host.kit._fast import http1


class _Head:
    http_version = b"1.1"
    status_code = 200
    headers = [(b"transfer-encoding", b"chunked")]


class _Reads:
    """A connection whose reads are the given pieces, then EOF; ``take_buffered`` gives the rest."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces
        self.next = 0

    async def read(self) -> bytes:
        if self.next >= len(self.pieces):
            return b""
        self.next += 1
        return self.pieces[self.next - 1]

    def take_buffered(self) -> bytes:
        rest = b"".join(self.pieces[self.next :])
        self.next = len(self.pieces)
        return rest


async def _read_body(pieces: list[bytes], stop_after: int | None, hold: bool) -> tuple[Any, ...]:
    """What reading the body gives: the chunks, the error, and the state after
    ``finish_buffered`` (called after ``stop_after`` chunks, as an adapter stopping at its end)."""
    body = http1.DirectBody(_Reads(pieces), _Head(), b"", None)  # type: ignore[arg-type]
    if not hold:
        body._hold = lambda received: False  # type: ignore[method-assign]  # every read parsed: as before
    chunks: list[bytes] = []
    error = None
    try:
        async for chunk in body:
            chunks.append(chunk)
            if stop_after is not None and len(chunks) >= stop_after:
                break
    except httpx.RemoteProtocolError as exc:
        error = str(exc)
    reusable = body.finish_buffered() if error is None else None
    return chunks, error, body.ended, body.rest, reusable


_HEADER = st.sampled_from(
    [b"5", b"5;ext=1", b'5; q="a\r b"', b"5;" + b"e" * 3000, b"5;" + b"e" * 120_000, b"zz", b"5\r", b"5 \t"]
)
_TRAILER = st.sampled_from(
    [b"\r\n", b"\n", b"x-t: 1\r\n\r\n", b"x-t: 1\n\n", b"x-t: 1\n\r\n", b"a: 1\r\n b\r\n\r\n", b"bad\r\n\r\n",
     b"x-t: 1\r\n" * 400 + b"\r\n", b"x: " + b"v" * 110_000 + b"\r\n\r\n", b"x-t: 1\r", b"\r", b""]
)  # fmt: skip


@st.composite
def _wire(draw: st.DrawFn) -> bytes:
    out = b""
    for _ in range(draw(st.integers(0, 3))):
        out += draw(_HEADER) + b"\r\nhello" + draw(st.sampled_from([b"\r\n"] * 6 + [b"\n", b"XX"]))
    return out + draw(st.sampled_from([b"0\r\n", b"0\n", b"0;x\r\n", b""])) + draw(_TRAILER)


@settings(max_examples=300, deadline=None)
@given(
    wire=_wire(),
    sizes=st.lists(st.integers(1, 40), min_size=1, max_size=8),
    stop_after=st.none() | st.integers(1, 3),
)
def test_held_reads_give_what_parsing_every_read_gives(wire: bytes, sizes: list[int], stop_after: int | None) -> None:
    pieces, pos = [], 0
    scale = 1 + len(wire) // 4000  # the 100 KB samples in reads of up to ~1 KB: the reference parses
    for size in itertools.cycle(sizes):  # every read again (quadratic), 40-byte reads took seconds
        if pos >= len(wire):
            break
        pieces.append(wire[pos : pos + size * scale])
        pos += size * scale
    ours = asyncio.run(_read_body(pieces, stop_after, hold=True))
    assert ours == asyncio.run(_read_body(pieces, stop_after, hold=False))


def _seconds(wire: bytes) -> float:
    """CPU time to read ``wire`` a byte per read (a server trickling it: each byte its own segment)."""
    pieces = [wire[i : i + 1] for i in range(len(wire))]
    t0 = time.process_time()
    chunks, error, ended, _, _ = asyncio.run(_read_body(pieces, None, hold=True))
    seconds = time.process_time() - t0
    assert (b"".join(chunks), error, ended) == (b"hello", None, True)
    return seconds


@pytest.mark.parametrize(
    "make",
    [
        lambda n: b"5;" + b"a" * n + b"\r\nhello\r\n0\r\n\r\n",  # a chunk extension
        lambda n: b"5\r\nhello\r\n0\r\n" + b"X-A: 1\n" * (n // 7) + b"\r\n",  # a trailer of many lines
    ],
    ids=["chunk-extension", "trailer"],
)
def test_a_long_header_or_trailer_a_byte_per_read_costs_linear_time(make: Any) -> None:
    """900 bytes and ×100 (90 KB, just under the limit): about ×100 the time, not ×10,000 (the
    buffer so far was joined and searched on every read: 3.5 s and 7.1 s)."""
    small = max(_seconds(make(900)), 0.002)
    big = _seconds(make(90_000))
    assert big < 1.5, f"90 KB took {big:.2f} s"  # ~0.1 s here
    assert big < 300 * small, (small, big)
