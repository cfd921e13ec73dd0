"""Bench: a model's ``write`` tool call of 10 KB, 100 KB and 1 MB, in 40-character fragments.

    python bench/toolcall_stream.py [runs]

Two rows per size (medians): the stream assembler alone (``AssistantStream``, in process), and the
whole run through ``atomic --mode rpc`` fed by a local server speaking Anthropic SSE, prompt →
idle with the file written. The ``×`` column is the time relative to the size ten times smaller:
about 10 means linear. (Before the partial parse went linear: 10 KB 273 ms, 30 KB 1.8 s, 70 KB
8.7 s in process.)
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


def in_process(size: int) -> float:
    _, arguments = write_arguments(size)
    s = AssistantStream({"id": "m", "provider": "p", "api": "a"})
    index, _ = s.toolcall_start("c", "write")
    t0 = time.perf_counter()
    for i in range(0, len(arguments), FRAGMENT):
        s.toolcall_delta(index, arguments[i : i + FRAGMENT])
    s.toolcall_end(index)
    return time.perf_counter() - t0


async def through_host(size: int) -> float:
    body, arguments = write_arguments(size)
    with tempfile.TemporaryDirectory() as tmp, sse.SSEServer() as server:
        server.enqueue(anthropic_write_reply(arguments, FRAGMENT))
        server.enqueue(anthropic_text_reply("Done."))
        write_models(Path(tmp) / "agent", server.base_url, "anthropic-messages")
        settings = {"sessionSummary": {"enabled": False}, "retry": {"enabled": False}}
        async with start_host("--model", "vendor/m1", base=Path(tmp), settings=settings) as host:
            await host.client.get_state()
            t0 = time.perf_counter()
            await host.client.prompt_and_wait("write big.txt", timeout=600)
            seconds = time.perf_counter() - t0
            assert (host.cwd / "big.txt").read_text() == body
    return seconds


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    print(f"{'size':>9} | {'assembler':>10} | {'×':>5} | {'through host':>12} | {'×':>5}")
    previous: tuple[float, float] | None = None
    for size in SIZES:
        local = statistics.median(in_process(size) for _ in range(runs))
        host = statistics.median(asyncio.run(through_host(size)) for _ in range(max(1, runs // 2)))
        ratio = (f"{local / previous[0]:5.1f}", f"{host / previous[1]:5.1f}") if previous else ("", "")
        print(f"{size:>9,} | {local * 1000:8.1f}ms | {ratio[0]:>5} | {host * 1000:10.1f}ms | {ratio[1]:>5}")
        previous = (local, host)


if __name__ == "__main__":
    main()
