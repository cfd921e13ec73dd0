"""A provider stream cannot make the host hold a line, an event or an error body without bound.

A gzip bomb (2 MB on the wire that expands to one 2 GiB SSE line), a line that never ends, an event
of short data lines that never ends, and a compressed error body of a gigabyte: each grew the host's
memory until the kernel stepped in. Each now fails the request with a clear provider error while
the host's peak memory (``VmHWM``) stays far below the data sent, and the host keeps serving. The
hosts run under an address-space limit, so a host that does buffer it all fails fast instead of
taking the machine's memory.
"""

from __future__ import annotations

import sys
import zlib
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from vendor_helpers import FIXTURES, NO_RETRY, assistants, text_of, write_models

from atomic_host.client import RpcClient
from atomic_host.testing import host_env
from atomic_host.testing_sse import Reply

MiB = 1024 * 1024
ADDRESS_SPACE = 3 * 1024 * MiB
PEAK_BOUND = 200 * MiB
"""Well above the host's own ~50 MiB and what a bound of 32 MiB adds, far below anything that held
the line (measured: 46-78 MiB)."""


def _gzip_repeated(head: bytes, block: bytes, count: int) -> list[bytes]:
    """A gzip body: ``head`` then ``block`` ``count`` times, never finished (no trailer). After a
    full flush the compressor starts afresh, so one compressed block serves for every repeat:
    a 1 MiB block of one byte is ~1 KB."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    first = comp.compress(head) + comp.flush(zlib.Z_FULL_FLUSH)
    body = comp.compress(block) + comp.flush(zlib.Z_FULL_FLUSH)
    assert comp.compress(block) + comp.flush(zlib.Z_FULL_FLUSH) == body
    return [first, *([body] * count)]


def _endless(piece: bytes) -> Iterator[bytes]:
    while True:
        yield piece


@asynccontextmanager
async def _host(tmp_path: Path, base_url: str, settings: dict[str, Any]) -> AsyncIterator[RpcClient]:
    """``atomic --mode rpc`` on model vendor/m1 (anthropic-messages) under an address-space limit."""
    agent, work = tmp_path / "agent", tmp_path / "work"
    write_models(agent, base_url, "anthropic-messages")
    (agent / "settings.json").write_text(__import__("json").dumps({**NO_RETRY, **settings}))
    work.mkdir()
    command = ["prlimit", f"--as={ADDRESS_SPACE}", "--", sys.executable, "-m", "atomic_host", "--mode", "rpc"]
    env = host_env(agent, tmp_path / "faux.jsonl", tmp_path / "faux-log.jsonl")
    client = RpcClient(["--model", "vendor/m1"], command=command, cwd=str(work), env=env)
    await client.start()
    try:
        yield client
    finally:
        await client.close()


def _peak(client: RpcClient) -> int:
    assert client.proc is not None
    for line in Path(f"/proc/{client.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


async def _fails_then_serves(client: RpcClient, sse_server: Any, expected: str) -> None:
    events = await client.prompt_and_wait("hi", timeout=120)
    (reply,) = assistants(events)
    assert reply["stopReason"] == "error" and reply["errorMessage"] == expected, reply.get("errorMessage")
    peak = _peak(client)
    assert peak < PEAK_BOUND, f"peak memory {peak // MiB} MiB"
    sse_server.replies.clear()
    sse_server.enqueue(Reply(chunks=[(FIXTURES / "anthropic/answer.sse").read_bytes()]))
    events = await client.prompt_and_wait("again", timeout=60)
    assert text_of(assistants(events)[0]) == "All done."


def _line_error(limit: int, what: str = "line") -> str:
    return f"Provider stream {what} longer than {limit} bytes (setting streamMaxLineBytes); the rest was not read"


async def test_a_gzip_bomb_line_is_refused_with_memory_bounded(sse_server: Any, tmp_path: Path) -> None:
    """2 MB on the wire, one 2 GiB line: the default bound (32 MiB) stops it."""
    chunks = _gzip_repeated(b"event: message_start\ndata: ", b"A" * MiB, 2048)
    assert sum(map(len, chunks)) < 3 * MiB
    sse_server.enqueue(Reply(chunks=chunks, headers={"content-encoding": "gzip"}))
    async with _host(tmp_path, sse_server.base_url, {}) as client:
        await _fails_then_serves(client, sse_server, _line_error(32 * MiB))


async def test_a_gzip_bomb_of_short_data_lines_is_refused_with_memory_bounded(sse_server: Any, tmp_path: Path) -> None:
    """One event of 8-byte ``data:`` lines, 1 GiB of them: each line is a Python string of its own
    (~7 times its bytes), so the event is refused while the lines of one decompressed piece are held."""
    chunks = _gzip_repeated(b"event: message_start\n", b"data:xy\n" * (MiB // 8), 1024)
    sse_server.enqueue(Reply(chunks=chunks, headers={"content-encoding": "gzip"}))
    async with _host(tmp_path, sse_server.base_url, {}) as client:
        await _fails_then_serves(client, sse_server, _line_error(32 * MiB, "event"))


async def test_a_line_that_never_ends_is_refused(sse_server: Any, tmp_path: Path) -> None:
    """Plain bytes, 1 MiB a write for ever, the bound set to 8 MiB."""
    sse_server.enqueue(Reply(chunks=_endless(b"A" * MiB)))  # type: ignore[arg-type]
    async with _host(tmp_path, sse_server.base_url, {"streamMaxLineBytes": 8 * MiB}) as client:
        await _fails_then_serves(client, sse_server, _line_error(8 * MiB))


async def test_an_event_that_never_ends_is_refused(sse_server: Any, tmp_path: Path) -> None:
    """Short ``data:`` lines for ever, never the blank line that ends the event."""
    sse_server.enqueue(Reply(chunks=_endless(b"data: " + b"x" * 1000 + b"\n") ))  # type: ignore[arg-type]
    async with _host(tmp_path, sse_server.base_url, {"streamMaxLineBytes": 4 * MiB}) as client:
        await _fails_then_serves(client, sse_server, _line_error(4 * MiB, "event"))


async def test_a_compressed_error_body_is_read_only_in_part(sse_server: Any, tmp_path: Path) -> None:
    """A 500 whose gzip body expands to 1 GiB: the error shows its start, the rest is not read."""
    chunks = _gzip_repeated(b'{"type":"error","error":{"type":"api_error","message":"', b"B" * MiB, 1024)
    sse_server.enqueue(Reply(status=500, chunks=chunks, headers={"content-encoding": "gzip"}))
    async with _host(tmp_path, sse_server.base_url, {}) as client:
        events = await client.prompt_and_wait("hi", timeout=120)
        (reply,) = assistants(events)
        message = reply["errorMessage"]
        assert message.startswith('500 {"type":"error","error":{"type":"api_error","message":"BBBB')
        assert message.endswith("B…") and len(message) == len("500 ") + 4000 + 1
        assert _peak(client) < PEAK_BOUND, f"peak memory {_peak(client) // MiB} MiB"
