"""Session commands through the real RPC host (medians of N round trips, client-measured).

Run: ``python bench/sessions_rpc.py [--sessions 1000] [--turns 2000] [--repeat 9]``.

For each store (JSONL, SQLite) it fills a temporary agent dir with ``--sessions`` small sessions
and one ``--turns``-turn session (user + assistant per turn) through the store API, starts
``atomic --mode rpc`` on it (faux provider) and times: list_sessions, switch_session to the long
session (alternating with a small one so every switch is real), get_entries with the cursor at
the newest entry, get_tree, get_messages, get_state right after a switch, and appends per second
(sequential set_session_name round trips, each one durably written). Times include the JSON
round trip over the pipes; ``ping`` (get_state on an empty session) shows that floor.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import sessions_store
from sessions_store import fill

from atomic_host.testing import start_host
from builtin_plugins.stores import open_builtin_store as open_store

TARGETS = {
    "switch_session (long)": 25.0,
    "get_entries since newest": 5.0,
    "list_sessions jsonl": 500.0,
    "list_sessions sqlite": 150.0,
}


async def timed(client: Any, command: dict[str, Any]) -> float:
    start = time.perf_counter()
    response = await client.request(command, timeout=120)
    elapsed = (time.perf_counter() - start) * 1000
    if not response.get("success"):
        raise RuntimeError(f"{command['type']} failed: {response.get('error')}")
    return elapsed


async def median(client: Any, command: dict[str, Any], repeat: int) -> float:
    return statistics.median([await timed(client, command) for _ in range(repeat)])


async def bench_store(kind: str, args: argparse.Namespace, rows: list[tuple[str, str, str]]) -> None:
    with tempfile.TemporaryDirectory(prefix="atomic-bench-") as tmp:
        root = Path(tmp)
        work = root / "work"
        work.mkdir()
        cwd = str(work.resolve())
        sessions_store.CWD = cwd  # fill() creates its sessions in this project
        store = open_store(kind, root / "agent", None, cwd, fsync="never")
        small = fill(store, 2)
        small_id = small.id
        small.close()
        for _ in range(args.sessions - 2):
            fill(store, 2).close()
        big = fill(store, args.turns)
        big_id, entries = big.id, len(big.entries)
        big.close()
        store.close()
        store_args = ("--session-store", "sqlite") if kind == "sqlite" else ()
        async with start_host(*store_args, "--session", small_id, base=root, cwd=work) as host:
            c = host.client
            rows.append(
                (
                    kind,
                    "ping (get_state, small session)",
                    f"{await median(c, {'type': 'get_state'}, args.repeat):.2f} ms",
                )
            )
            listing = await median(c, {"type": "list_sessions"}, args.repeat)
            count = len((await c.call("list_sessions"))["sessions"])
            rows.append((kind, f"list_sessions ({count} sessions)", _mark(listing, f"list_sessions {kind}")))
            switches, first_state = [], []
            for _ in range(args.repeat):
                switches.append(await timed(c, {"type": "switch_session", "sessionId": big_id}))
                first_state.append(await timed(c, {"type": "get_state"}))
                await timed(c, {"type": "switch_session", "sessionId": small_id})
            rows.append(
                (
                    kind,
                    f"switch_session ({entries} entries)",
                    _mark(statistics.median(switches), "switch_session (long)"),
                )
            )
            rows.append((kind, "  + first get_state after it", f"{statistics.median(first_state):.1f} ms"))
            await c.call("switch_session", sessionId=big_id)
            newest = (await c.call("get_state")) and (await c.call("get_tree"))["leafId"]
            since = await median(c, {"type": "get_entries", "since": newest}, args.repeat)
            rows.append((kind, "get_entries since newest", _mark(since, "get_entries since newest")))
            rows.append((kind, "get_tree", f"{await median(c, {'type': 'get_tree'}, args.repeat):.1f} ms"))
            rows.append((kind, "get_messages", f"{await median(c, {'type': 'get_messages'}, args.repeat):.1f} ms"))
            rows.append((kind, "get_entries (all)", f"{await median(c, {'type': 'get_entries'}, args.repeat):.1f} ms"))
            n = args.appends
            start = time.perf_counter()
            for i in range(n):
                await c.call("set_session_name", name=f"name {i}")
            rate = n / (time.perf_counter() - start)
            rows.append((kind, "appends (set_session_name, fsync)", f"{rate:,.0f} /s"))


def _mark(ms: float, target: str) -> str:
    limit = TARGETS[target]
    return f"{ms:.1f} ms  (target < {limit:g} ms: {'ok' if ms < limit else 'MISSED'})"


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--appends", type=int, default=300)
    parser.add_argument("--store", choices=("jsonl", "sqlite", "both"), default="both")
    args = parser.parse_args()
    rows: list[tuple[str, str, str]] = []
    for kind in ("jsonl", "sqlite") if args.store == "both" else (args.store,):
        await bench_store(kind, args, rows)
    width = max(len(r[1]) for r in rows)
    print(f"{'store':<7} {'operation':<{width}}  median")
    for kind, op, result in rows:
        print(f"{kind:<7} {op:<{width}}  {result}")


if __name__ == "__main__":
    asyncio.run(main())
