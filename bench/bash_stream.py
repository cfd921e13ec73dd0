"""Direct ``bash`` streaming throughput: a command printing 20 MB through ``atomic --mode rpc``.

Prints the median time to the final response over 5 runs, the bytes delivered as
``bash_execution_update`` deltas per run, and the host's peak RSS (VmHWM) before and after.
Run: ``python bench/bash_stream.py``.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from typing import Any

from atomic_host.testing import start_host

SIZE = 20_000_000
RUNS = 5
COMMAND = f"yes 'the quick brown fox jumps over the lazy dog' | head -c {SIZE}"


def vm_hwm_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        async with start_host(env={"TMPDIR": tmp}) as host:
            client = host.client
            assert client.proc is not None
            await client.get_state()
            before = vm_hwm_kib(client.proc.pid)
            times: list[float] = []
            delivered: list[int] = []
            for run in range(RUNS):
                counted = 0

                def on_event(event: dict[str, Any], rid: str = f"bench-{run}") -> None:
                    nonlocal counted
                    if event.get("type") == "bash_execution_update" and event.get("id") == rid:
                        counted += len(event["delta"].encode())

                off = client.on_event(on_event)
                start = time.perf_counter()
                response = await client.request({"type": "bash", "command": COMMAND, "id": f"bench-{run}"}, 120)
                times.append(time.perf_counter() - start)
                off()
                assert response["success"] and response["data"]["exitCode"] == 0, response
                delivered.append(counted)
                # Drop what the client kept so its own memory does not grow across runs.
                client.events.clear()
                client.lines.clear()
            after = vm_hwm_kib(client.proc.pid)
    print(f"{'metric':<34} {'value':>14}")
    print(f"{'median time to response (s)':<34} {statistics.median(times):>14.3f}")
    print(f"{'min / max (s)':<34} {min(times):>6.3f} / {max(times):.3f}")
    print(f"{'delta bytes per run (all == 20MB)':<34} {all(d == SIZE for d in delivered)!s:>14}")
    print(f"{'delta bytes (first run)':<34} {delivered[0]:>14,}")
    print(f"{'host VmHWM before (MiB)':<34} {before / 1024:>14.1f}")
    print(f"{'host VmHWM after (MiB)':<34} {after / 1024:>14.1f}")


if __name__ == "__main__":
    asyncio.run(main())
