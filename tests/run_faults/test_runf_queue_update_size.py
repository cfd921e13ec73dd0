"""``queue_update`` lists the whole queue, so one update per change made the output grow with the
square of the input (10,000 ``follow_up``s during a reply wrote 691 MB). Updates are paced: the
bytes written per queued message stay under a constant at x1, x10 and x100 the input, every
update is a true state of the queue, in order, and the final state is always sent."""

from __future__ import annotations

import asyncio
import json

import pytest
from runf_helpers import ext, gate_call

from atomic_host.testing import start_host

PER_MESSAGE = 1200
"""Bytes of queue_update allowed per queued message (the pacer's credit per change, plus a little)."""


async def _flood(n: int) -> tuple[int, list[dict[str, list[str]]]]:
    """Queue ``n`` follow-ups at once while a run waits at the gate; the queue_update bytes
    written and the updates, once every response and the final state arrived."""
    async with start_host("-e", ext("runf_sender")) as host:
        c = host.client
        host.faux.push(gate_call(), "done")
        n0 = len(c.events)
        await c.prompt("go")
        await c.wait_for_event("tool_execution_start", after=n0)
        texts = [f"f{i}" for i in range(n)]
        wire = "".join(json.dumps({"type": "follow_up", "message": t, "id": t}) + "\n" for t in texts)
        first_line = len(c.lines)
        await c.send_raw(wire.encode())
        await c.wait_for_event(lambda e: e["type"] == "queue_update" and len(e["followUp"]) == n, timeout=120)
        deadline = asyncio.get_running_loop().time() + 60
        while (answered := {r.get("id") for r in c.responses if r.get("command") == "follow_up"}) != set(texts):
            assert asyncio.get_running_loop().time() < deadline, f"{n - len(answered)} follow-ups unanswered"
            await asyncio.sleep(0.05)
        assert all(r["success"] for r in c.responses if r.get("command") == "follow_up")
        await asyncio.sleep(0.2)  # anything still due goes out within the pacer's quiet time
        lines = [line for line in c.lines[first_line:] if line.startswith('{"type":"queue_update"')]
        updates = [json.loads(line) for line in lines]
        await c.abort()
        return sum(len(line) + 1 for line in lines), updates


@pytest.mark.parametrize("n", [30, 300, 3000])  # x1, x10, x100
async def test_queue_update_bytes_grow_linearly(n: int) -> None:
    written, updates = await _flood(n)
    assert written <= PER_MESSAGE * n, f"{written} bytes of queue_update for {n} follow-ups"
    # each update is a prefix of the final queue (true states, in order), the last is the whole queue
    sizes = [len(u["followUp"]) for u in updates]
    assert sizes == sorted(sizes) and sizes[-1] == n
    assert all(u["followUp"] == [f"f{i}" for i in range(len(u["followUp"]))] for u in updates)
    if n <= 30:
        assert sizes == list(range(1, n + 1))  # a short queue: every change, as before
