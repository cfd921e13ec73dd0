"""Session commands through the real RPC host (medians of N round trips, client-measured).

Run: ``python bench/sessions_rpc.py [--sessions 1000] [--turns 2000] [--repeat 9]``, or
``python bench/sessions_rpc.py --curves [--repeat 7]`` for the growth curves (below).

For each store (JSONL, SQLite) it fills a temporary agent dir with ``--sessions`` small sessions
and one ``--turns``-turn session (user + assistant per turn) through the store API, starts
``atomic --mode rpc`` on it (faux provider) and times: list_sessions, switch_session to the long
session (alternating with a small one so every switch is real), get_entries with the cursor at
the newest entry, get_tree, get_messages, get_state right after a switch, and appends per second
(sequential set_session_name round trips, each one durably written). Times include the JSON
round trip over the pipes; ``ping`` (get_state on an empty session) shows that floor.

``--curves``: the same commands at 200, 2,000 and 20,000 turns (``--curve-turns``), and
``list_sessions`` over 1,000 and 10,000 SQLite sessions (``--curve-sessions``), each size ×10 the
last, with the ratio of each step: work that grows with the file shows ~10×, anything above it
grows faster than the file. Opening is spawn → first ``get_state`` response with ``--session``;
``get_entries`` pages are ``since`` the 101st-newest entry (100 entries) and ``since`` the newest;
``get_tree`` is timed right after a switch (first) and again. Times end when the response line
has arrived (before the client parses it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import itertools

import sessions_store
from sessions_store import fill

from atomic_host.client import RpcClient
from atomic_host.testing import host_env, start_host
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


class ArrivalClient(RpcClient):
    """Notes when each response line arrived, before parsing it (a 20,000-turn ``get_messages``
    is 24 MB: the client's ``json.loads`` of it is no part of the host's answer)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.arrived: list[float] = []

    def _dispatch(self, line: str) -> None:
        self.arrived.append(time.perf_counter())
        head = _HEAD.match(line)
        if head is not None and head.group(2) == "get_tree":
            # A 20,000-turn tree nests 40,000 levels deep: the client's deep-JSON fallback would
            # overflow the C stack. Only the head is read; the body's size is kept.
            line = json.dumps({"id": head.group(1), "type": "response", "command": "get_tree",
                               "success": head.group(3) == "true", "data": {"bytes": len(line)}})  # fmt: skip
        super()._dispatch(line)
        self.lines.clear()


_HEAD = re.compile(r'^\{"id":"([^"]*)","type":"response","command":"([a-z_]+)","success":(true|false)')


async def arrival(client: ArrivalClient, command: dict[str, Any]) -> float:
    """ms from sending ``command`` to its response line."""
    start = time.perf_counter()
    response = await client.request(command, timeout=300)
    if not response.get("success"):
        raise RuntimeError(f"{command['type']} failed: {response.get('error')}")
    return (client.arrived[-1] - start) * 1000


def spawn(root: Path, work: Path, *args: str) -> ArrivalClient:
    (root / "faux.jsonl").touch()
    env = host_env(root / "agent", root / "faux.jsonl", root / "faux-log.jsonl")
    command = [sys.executable, "-m", "atomic_host", "--mode", "rpc"]
    return ArrivalClient(["--provider", "faux", *args], command=command, cwd=str(work), env=env)


async def curve_point(turns: int, args: argparse.Namespace) -> dict[str, float]:
    """Every figure of one session size."""
    point: dict[str, float] = {}
    med = statistics.median
    with tempfile.TemporaryDirectory(prefix="atomic-curve-") as tmp:
        root, work = Path(tmp), Path(tmp) / "work"
        work.mkdir()
        sessions_store.CWD = str(work.resolve())
        store = open_store(args.curve_store, root / "agent", None, sessions_store.CWD, fsync="never")
        small, big = fill(store, 2), fill(store, turns)
        small_id, big_id, newest, page = small.id, big.id, big.entries[-1]["id"], big.entries[-101]["id"]
        point["file MB"] = sum(len(jsonfast_dumps(e)) + 1 for e in big.entries) / 1e6
        small.close()
        big.close()
        store.close()
        kind = ("--session-store", "sqlite") if args.curve_store == "sqlite" else ()
        opens = {"small": [], "big": []}
        for _ in range(max(3, args.repeat // 2)):
            for name, ref in (("small", small_id), ("big", big_id)):
                client = spawn(root, work, *kind, "--session", ref)
                start = time.perf_counter()
                await client.start()
                await client.request({"type": "get_state"}, timeout=300)
                opens[name].append((client.arrived[-1] - start) * 1000)
                await client.close()
        point["open (spawn → get_state), 2-turn"] = med(opens["small"])
        point["open (spawn → get_state)"] = med(opens["big"])
        client = spawn(root, work, *kind, "--session", small_id)
        await client.start()
        try:
            await client.request({"type": "get_state"})
            await asyncio.sleep(0.5)  # the host's warm-up (orjson, pydantic) is over
            switch, first_state, first_tree = [], [], []
            for _ in range(args.repeat):
                switch.append(await arrival(client, {"type": "switch_session", "sessionId": big_id}))
                first_state.append(await arrival(client, {"type": "get_state"}))
                first_tree.append(await arrival(client, {"type": "get_tree"}))
                await arrival(client, {"type": "switch_session", "sessionId": small_id})
            point["switch_session"] = med(switch)
            point["  first get_state after it"] = med(first_state)
            point["  first get_tree after it"] = med(first_tree)
            await arrival(client, {"type": "switch_session", "sessionId": big_id})
            reads = {
                "get_entries since the 101st-newest": {"type": "get_entries", "since": page},
                "get_entries since the newest": {"type": "get_entries", "since": newest},
                "get_tree again": {"type": "get_tree"},
                "get_messages": {"type": "get_messages"},
                "get_entries (all)": {"type": "get_entries"},
                "get_state": {"type": "get_state"},
                "get_session_stats": {"type": "get_session_stats"},
                "get_fork_messages": {"type": "get_fork_messages"},
            }
            for label, command in reads.items():
                await arrival(client, command)
                point[label] = med([await arrival(client, command) for _ in range(args.repeat)])
        finally:
            await client.close()
    return point


async def listing_point(count: int, args: argparse.Namespace) -> float:
    from atomic_host.kit.sessions.store import MemoryStore, new_header

    with tempfile.TemporaryDirectory(prefix="atomic-curve-") as tmp:
        root, work = Path(tmp), Path(tmp) / "work"
        work.mkdir()
        cwd = str(work.resolve())
        sessions_store.CWD = cwd
        template = fill(MemoryStore(), 2)
        store = open_store("sqlite", root / "agent", None, cwd, fsync="never")
        ids = []
        for _ in range(count):
            session = store.put(new_header(cwd), template.entries)
            ids.append(session.id)
            session.close()
        store.close()
        client = spawn(root, work, "--session-store", "sqlite", "--session", ids[0])
        await client.start()
        try:
            await client.request({"type": "get_state"})
            await asyncio.sleep(0.5)
            listing = client.request({"type": "list_sessions"}, timeout=300)
            if len((await listing)["data"]["sessions"]) != count:
                raise RuntimeError("list_sessions did not list every session")
            return statistics.median([await arrival(client, {"type": "list_sessions"}) for _ in range(args.repeat)])
        finally:
            await client.close()


def jsonfast_dumps(entry: dict[str, Any]) -> str:
    from atomic_host.kit.sessions.jsonl import encode_line

    return encode_line(entry).decode()[:-1]


async def curves(args: argparse.Namespace) -> None:
    sizes = args.curve_turns
    points = []
    for turns in sizes:
        start = time.perf_counter()
        points.append(await curve_point(turns, args))
        print(f"{turns} turns: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    listings = [await listing_point(n, args) for n in args.curve_sessions]
    header = [f"figure (ms, medians of {args.repeat})", *(f"{t:,} turns" for t in sizes)]
    header += [f"×{sizes[i + 1] // sizes[i]} step" for i in range(len(sizes) - 1)]
    rows = []
    for key in points[0]:
        values = [p[key] for p in points]
        steps = [f"{b / a:.1f}×" if a else "—" for a, b in itertools.pairwise(values)]
        rows.append([key, *(f"{v:,.2f}" for v in values), *steps])
    listing_header = ["list_sessions, SQLite (ms)", *(f"{n:,} sessions" for n in args.curve_sessions)]
    listing_steps = [f"{b / a:.1f}×" for a, b in itertools.pairwise(listings)]
    print(f"store {args.curve_store}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()
    print("| " + " | ".join([*listing_header, "step"]) + " |")
    print("|" + "---|" * (len(listing_header) + 1))
    print("| list_sessions | " + " | ".join(f"{v:,.1f}" for v in listings) + " | " + ", ".join(listing_steps) + " |")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--appends", type=int, default=300)
    parser.add_argument("--store", choices=("jsonl", "sqlite", "both"), default="both")
    parser.add_argument("--curves", action="store_true", help="the growth curves instead (see the docstring)")
    parser.add_argument("--curve-turns", type=int, nargs="+", default=[200, 2000, 20000])
    parser.add_argument("--curve-sessions", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--curve-store", choices=("jsonl", "sqlite"), default="jsonl")
    args = parser.parse_args()
    if args.curves:
        await curves(args)
        return
    rows: list[tuple[str, str, str]] = []
    for kind in ("jsonl", "sqlite") if args.store == "both" else (args.store,):
        await bench_store(kind, args, rows)
    width = max(len(r[1]) for r in rows)
    print(f"{'store':<7} {'operation':<{width}}  median")
    for kind, op, result in rows:
        print(f"{kind:<7} {op:<{width}}  {result}")


if __name__ == "__main__":
    asyncio.run(main())
