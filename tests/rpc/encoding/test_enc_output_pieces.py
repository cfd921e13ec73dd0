"""The stdout writer's pieces reach a slow reader whole and in order: a spliced response of
megabytes through a non-blocking pipe (partial ``writev`` results, ``BlockingIOError``) arrives as
the one line that encoding the plain record gives, between the records sent before and after it."""

from __future__ import annotations

import fcntl
import json
import os
import threading
import time

from atomic_host.core import jsonfast
from atomic_host.frontends.rpc.io import Output


def test_a_big_spliced_response_reaches_a_slow_reader_whole(engine: str) -> None:
    items = [{"i": i, "text": f"entry {i} ✓ " + "x" * 700} for i in range(4000)]
    raw = jsonfast.RawJSON(jsonfast.dumpb(items))
    r, w = os.pipe()
    fcntl.fcntl(w, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 16)
    os.set_blocking(w, False)  # as a stdout shared with a non-blocking reader
    received: list[bytes] = []

    def read_slowly() -> None:
        while chunk := os.read(r, 7000):
            received.append(chunk)
            time.sleep(0.0001)

    def write() -> None:
        out = Output(fd=w)
        out.send({"type": "before"})
        out.respond("get_entries", "x", {"entries": raw, "leafId": "abc"})
        out.send({"type": "after"})
        os.close(w)

    reader, writer = (threading.Thread(target=f, daemon=True) for f in (read_slowly, write))
    reader.start()
    writer.start()
    writer.join(30)
    assert not writer.is_alive(), "the writer never finished"
    reader.join(30)
    os.close(r)
    lines = b"".join(received).split(b"\n")
    assert lines[0] == b'{"type":"before"}' and lines[2] == b'{"type":"after"}' and lines[3] == b""
    record = {"id": "x", "type": "response", "command": "get_entries", "success": True,
              "data": {"entries": items, "leafId": "abc"}}  # fmt: skip
    assert lines[1] == jsonfast.dumps(record).encode()
    assert json.loads(lines[1])["data"]["entries"] == items
