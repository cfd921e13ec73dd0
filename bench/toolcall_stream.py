"""Bench: a model's ``write`` tool call of 10 KB, 100 KB and 1 MB, in 40-character fragments.

    python bench/toolcall_stream.py [runs]

Per size (medians): the stream assembler alone (``AssistantStream``, in process), and the whole run
through ``atomic --mode rpc`` fed by a local server speaking Anthropic SSE (16 KB per write),
prompt → idle with the file written: in a fresh host (the prompt sent right after the first
``get_state``, so it also waits for what the warm-up thread is still importing: httpx, pydantic,
the TLS context, ~0.2 s) and in a warm one (after a first, short prompt). The ``×`` columns are the
time relative to the size ten times smaller: about 10 means linear. (Before the partial parse went
linear: 10 KB 273 ms, 30 KB 1.8 s, 70 KB 8.7 s in process.)
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "stream_cost"))

from scost_helpers import anthropic_text_reply, anthropic_write_reply, sse, write_arguments, write_models  # noqa: E402

from atomic_host.kit.llm.stream import AssistantStream  # noqa: E402
from atomic_host.testing import start_host  # noqa: E402

SIZES = (10_000, 100_000, 1_000_000)
FRAGMENT = 40
WRITE = 16_384


def in_process(size: int) -> float:
    _, arguments = write_arguments(size)
    s = AssistantStream({"id": "m", "provider": "p", "api": "a"})
    index, _ = s.toolcall_start("c", "write")
    t0 = time.perf_counter()
    for i in range(0, len(arguments), FRAGMENT):
        s.toolcall_delta(index, arguments[i : i + FRAGMENT])
    s.toolcall_end(index)
    return time.perf_counter() - t0


async def through_host(size: int, warm: bool) -> float:
    body, arguments = write_arguments(size)
    with tempfile.TemporaryDirectory() as tmp, sse.SSEServer() as server:
        if warm:
            server.enqueue(anthropic_text_reply("Hello."))
        # 16 KB writes (a TLS record's worth) of the pre-encoded stream: the bench's own Python
        # server writing 37,500 events one by one took as much CPU as the host parsing them
        stream = "".join(anthropic_write_reply(arguments, FRAGMENT).chunks).encode()
        server.enqueue(sse.Reply(chunks=sse.pieces(stream, WRITE)))
        server.enqueue(anthropic_text_reply("Done."))
        write_models(Path(tmp) / "agent", server.base_url, "anthropic-messages")
        settings = {"sessionSummary": {"enabled": False}, "retry": {"enabled": False}}
        async with start_host("--model", "vendor/m1", base=Path(tmp), settings=settings) as host:
            await host.client.get_state()
            if warm:
                await host.client.prompt_and_wait("hello", timeout=60)
            t0 = time.perf_counter()
            await host.client.prompt_and_wait("write big.txt", timeout=600)
            seconds = time.perf_counter() - t0
            assert (host.cwd / "big.txt").read_text() == body
    return seconds


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    print(f"{'size':>9} | {'assembler':>10} | {'×':>5} | {'fresh host':>10} | {'×':>5} | {'warm host':>10} | {'×':>5}")
    previous: tuple[float, ...] | None = None
    for size in SIZES:
        local = statistics.median(in_process(size) for _ in range(runs))
        hosts = max(1, runs // 2)
        fresh = statistics.median(asyncio.run(through_host(size, warm=False)) for _ in range(hosts))
        warm = statistics.median(asyncio.run(through_host(size, warm=True)) for _ in range(hosts))
        now = (local, fresh, warm)
        ratio = [f"{a / b:5.1f}" for a, b in zip(now, previous, strict=True)] if previous else ["", "", ""]
        print(f"{size:>9,} | {local * 1000:8.1f}ms | {ratio[0]:>5} | {fresh * 1000:8.1f}ms | {ratio[1]:>5} | "
              f"{warm * 1000:8.1f}ms | {ratio[2]:>5}")
        previous = now


if __name__ == "__main__":
    main()
