"""CPU of ``switch_session`` inside one host process at session sizes ×10 apart.

Run: ``python bench/switch_curve.py [--turns 200 2000 20000] [--repeat 9]``.

For each size it builds bench/sessions_profile.py's in-process host (the plugins and models of
``atomic --mode rpc``) on a 2-turn and an N-turn session and times ``switch_session`` to the long
one, alternating with the short one so every switch loads, as ``time.process_time`` (the CPU of
every thread of the process: the figure that holds still on a loaded machine). It prints the
median per size, the µs per entry, and the ratio of each step: 10× the turns should cost ≤ ~10×.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sessions_profile import InProcessHost


async def point(turns: int, repeat: int) -> float:
    """Median CPU ms of a switch to a ``turns``-turn session."""
    with tempfile.TemporaryDirectory(prefix="atomic-switch-") as tmp:
        host = InProcessHost(Path(tmp), turns)
        host.clock = time.process_time
        await host.start()
        await host.run({"type": "get_state"})
        samples = []
        for i in range(repeat + 1):
            elapsed = await host.switch(True)
            await host.switch(False)
            if i:  # the first one warms the imports and caches up
                samples.append(elapsed)
        return statistics.median(samples)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[200, 2000, 20000])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    results = [await point(turns, args.repeat) for turns in args.turns]
    print(f"switch_session, CPU ms in process, medians of {args.repeat}")
    for turns, ms in zip(args.turns, results, strict=True):
        entries = 2 * turns + 2
        print(f"{turns:>7,} turns ({entries:,} entries): {ms:8.2f} ms  {ms * 1000 / entries:6.2f} µs/entry")
    steps = [f"{b / a:.1f}×" for a, b in itertools.pairwise(results)]
    print("steps: " + ", ".join(steps))


if __name__ == "__main__":
    asyncio.run(main())
