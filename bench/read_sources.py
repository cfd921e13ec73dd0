"""Bench: how long ``read`` takes on big sources, through ``atomic --mode rpc`` with a scripted model.

    python bench/read_sources.py [runs]

Each case is one ``read`` call; the time is from the ``tool_execution_start`` event to its
``tool_execution_end`` as the client sees them (medians of ``runs``, default 3), in one warm host:

- a 100-page PDF (each page ~40 lines of text, zlib-compressed streams), all pages, and one page;
- a 50 MB text member at the end of a tar.gz (behind a 1 MB one), and the listing of that tarball;
- a 64 KB text file, for the baseline of one call.
"""

from __future__ import annotations

import asyncio
import io
import random
import statistics
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "read_sources"))

from docmakers import pdf_bytes  # noqa: E402

from atomic_host.testing import start_host  # noqa: E402


def make_files(work: Path) -> None:
    rng = random.Random(1)
    words = ["archive", "member", "page", "reader", "stream", "bound", "token", "model", "host", "tool"]

    def line() -> str:
        return " ".join(rng.choice(words) for _ in range(10))

    pages = ["\n".join(f"{p}.{i} {line()}" for i in range(40)) for p in range(100)]
    (work / "hundred.pdf").write_bytes(pdf_bytes(pages))
    big = "".join(f"{i:08d} {line()}\n" for i in range(50 * 1024 * 1024 // 70)).encode()
    with tarfile.open(work / "big.tar.gz", "w:gz", compresslevel=6) as tf:
        for name, data in (("first.txt", b"x\n" * 500_000), ("data/big.txt", big)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    (work / "plain.txt").write_text("".join(f"{line()}\n" for _ in range(1000)))
    print(f"big.txt member: {len(big) / 1e6:.1f} MB; tar.gz {(work / 'big.tar.gz').stat().st_size / 1e6:.1f} MB")


async def timed_read(host, path: str) -> float:  # type: ignore[no-untyped-def]
    await host.client.new_session()  # a fresh context: no compaction eating the scripted replies
    call = {"type": "toolCall", "name": "read", "arguments": {"path": path}}
    host.faux.push({"content": [call]}, "ok")
    events = await host.client.prompt_and_wait("go", timeout=300)
    start = next(e for e in events if e.get("type") == "tool_execution_start")
    end = next(e for e in events if e.get("type") == "tool_execution_end")
    assert not end["isError"], end["result"]
    return end["_t"] - start["_t"]  # stamped by the listener as each event arrived


async def main(runs: int) -> None:
    async with start_host() as host:
        make_files(host.cwd)
        loop = asyncio.get_running_loop()
        host.client.on_event(lambda e: e.__setitem__("_t", loop.time()))
        await host.client.get_state()
        cases = ["plain.txt", "hundred.pdf", "hundred.pdf:50", "big.tar.gz:data/big.txt", "big.tar.gz"]
        for case in cases:
            times = [await timed_read(host, case) for _ in range(runs)]
            each = ", ".join(f"{t:.2f}" for t in times)
            print(f"{case:28} median {statistics.median(times) * 1000:8.0f} ms  (runs: {each} s)")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 3))
