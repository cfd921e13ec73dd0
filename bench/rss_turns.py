"""Bench: peak RSS of the host (VmHWM from /proc/<pid>/status) after N faux turns.

    python bench/rss_turns.py [turns]

Each turn is one prompt → short faux reply in the same session, so the context keeps growing.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from atomic_host.testing import start_host


def vm_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


async def main() -> None:
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    # Auto-compaction would summarise the growing context; it is off so every turn stays in memory.
    async with start_host(settings={"compaction": {"enabled": False}}) as host:
        client = host.client
        assert client.proc is not None
        pid = client.proc.pid
        await client.get_state()
        start_hwm = vm_kib(pid, "VmHWM")
        host.faux.push(*[f"Reply number {i}: the quick brown fox jumps over the lazy dog." for i in range(turns)])
        t0 = time.perf_counter()
        for i in range(turns):
            n0 = len(client.events)
            await client.prompt(f"turn {i}")
            await client.wait_for_idle(after=n0)
            del client.events[:]  # keep the bench process itself small
            client.lines.clear()
        elapsed = time.perf_counter() - t0
        hwm, rss = vm_kib(pid, "VmHWM"), vm_kib(pid, "VmRSS")
        count = (await client.get_state())["messageCount"]
    print(f"{'metric':<36}{'value':>12}")
    print(f"{'turns':<36}{turns:>12}")
    print(f"{'messages in context':<36}{count:>12}")
    print(f"{'peak RSS at startup (MiB)':<36}{start_hwm / 1024:>12.1f}")
    print(f"{'peak RSS after turns (MiB)':<36}{hwm / 1024:>12.1f}")
    print(f"{'RSS now (MiB)':<36}{rss / 1024:>12.1f}")
    print(f"{'mean ms per turn (faux, growing ctx)':<36}{elapsed / turns * 1000:>12.2f}")


if __name__ == "__main__":
    asyncio.run(main())
