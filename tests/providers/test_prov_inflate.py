"""``http._inflate`` decompresses a ``gzip``/``deflate`` body as httpx's decoders do (the same bytes,
the same ``DecodingError``s), however the compressed bytes are cut, but in bounded pieces: one
network read of a gzip bomb no longer expands to 64 MB at once."""

from __future__ import annotations

import asyncio
import itertools
import time
import zlib
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from atomic_host.kit.llm.http import INFLATE_PIECE, _inflate


def _compress(data: bytes, kind: str) -> bytes:
    if kind == "gzip":
        comp = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    elif kind == "zlib":
        comp = zlib.compressobj(6, zlib.DEFLATED, zlib.MAX_WBITS)
    else:
        comp = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return comp.compress(data) + comp.flush()


async def _chunks(parts: list[bytes]) -> Any:
    for part in parts:
        yield part


async def _reference(parts: list[bytes], coding: str) -> tuple[bytes, str | None]:
    response = httpx.Response(200, headers={"content-encoding": coding}, content=_chunks(parts))
    out = b""
    try:
        async for piece in response.aiter_bytes():
            out += piece
    except httpx.DecodingError as exc:
        return out, f"DecodingError: {exc}"
    return out, None


async def _ours(parts: list[bytes], coding: str) -> tuple[bytes, str | None, int]:
    out: list[bytes] = []
    try:
        async for piece in _inflate(_chunks(parts), coding):
            out.append(piece)
    except httpx.DecodingError as exc:
        return b"".join(out), f"DecodingError: {exc}", max(map(len, out), default=0)
    return b"".join(out), None, max(map(len, out), default=0)


def _cut(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=3000) | st.text(max_size=3000).map(str.encode),
    st.sampled_from(["gzip", "zlib", "raw"]),
    st.lists(st.integers(min_value=0, max_value=10_000), max_size=8),
    st.sampled_from(["", "flip", "truncate", "garbage"]),
)
def test_inflate_gives_what_httpx_gives(data: bytes, kind: str, cuts: list[int], damage: str) -> None:
    body = _compress(data, kind)
    if damage == "flip" and len(body) > 12:
        body = body[:10] + bytes([body[10] ^ 0xFF]) + body[11:]
    elif damage == "truncate":
        body = body[: len(body) // 2]
    elif damage == "garbage":
        body = b"\x00not compressed at all" + body
    coding = "gzip" if kind == "gzip" else "deflate"
    parts = _cut(body, cuts)
    expected = asyncio.run(_reference(parts, coding))
    out, error, _ = asyncio.run(_ours(parts, coding))
    assert (out, error) == expected


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_a_bomb_expands_in_bounded_pieces(coding: str) -> None:
    """16 MiB of zeros compress to ~16 KB; every piece given is at most INFLATE_PIECE, and the work
    is linear at 10x and 100x (CPU time, not wall time)."""

    def run(size: int) -> tuple[float, int]:
        body = _compress(bytes(size), "gzip" if coding == "gzip" else "zlib")
        start = time.process_time()
        out, error, biggest = asyncio.run(_ours([body], coding))
        assert error is None and len(out) == size
        return time.process_time() - start, biggest

    times = {}
    for size in (BIG // 100, BIG // 10, BIG):
        times[size], biggest = run(size)
        assert biggest <= INFLATE_PIECE
    assert times[BIG] < 250 * times[BIG // 100] + 0.5, times


BIG = 16 * 1024 * 1024
