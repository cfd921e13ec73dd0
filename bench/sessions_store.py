"""Session store timings (median of N): listing, opening a long session, entries_since, appends.

Run: ``python bench/sessions_store.py [--sessions 1000] [--turns 2000] [--repeat 5]``.
Everything happens in a temporary agent dir that is removed afterwards.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from builtin_plugins.stores import open_builtin_store as open_store

CWD = "/bench/project"


def _user(i: int) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "text", "text": f"question {i} " + "x" * 200}],
        "timestamp": i,
    }


def _assistant(i: int) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": f"answer {i} " + "y" * 600}],
        "api": "faux",
        "provider": "faux",
        "model": "faux-1",
        "usage": {
            "input": 1,
            "output": 1,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 2,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "stop",
        "timestamp": i + 1,
    }


def fill(store: Any, turns: int) -> Any:
    session = store.new_session(CWD)
    session.append_model_change("faux", "faux-1")
    session.append_thinking_level_change("off")
    for i in range(turns):
        session.append_message(_user(2 * i))
        session.append_message(_assistant(2 * i))
    return session


def median_ms(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("jsonl", "sqlite"):
            agent = Path(tmp) / kind
            fast = open_store(kind, agent, None, CWD, fsync="never")
            for _ in range(args.sessions):
                fill(fast, 5).close()
            big = fill(fast, args.turns)
            big_id, newest = big.id, big.entries[-2]["id"]
            big.close()
            fast.close()

            store = open_store(kind, agent, None, CWD)
            count = len(store.list(CWD))
            rows.append(
                (
                    kind,
                    f"list {count} sessions",
                    f"{median_ms(lambda s=store: s.list(CWD), args.repeat):.1f} ms",
                )
            )
            opened = store.open(big_id)
            rows.append(
                (
                    kind,
                    f"open {len(opened.entries)}-entry session",
                    f"{median_ms(lambda s=store, i=big_id: s.open(i), args.repeat):.1f} ms",
                )
            )
            since = median_ms(lambda o=opened, e=newest: [o.entries_since(e) for _ in range(1000)], args.repeat) / 1000
            rows.append((kind, "entries_since(newest)", f"{since * 1000:.2f} µs"))
            for policy in ("always", "never"):
                st = open_store(kind, agent, None, CWD, fsync=policy)
                session = st.open(big_id)
                n = 200
                start = time.perf_counter()
                for i in range(n):
                    session.append_message(_user(i))
                rate = n / (time.perf_counter() - start)
                rows.append((kind, f"append (fsync={policy})", f"{rate:,.0f} /s"))
                session.close()
                st.close()
            store.close()
    width = max(len(r[1]) for r in rows)
    print(f"{'store':<7} {'operation':<{width}}  result")
    for kind, op, result in rows:
        print(f"{kind:<7} {op:<{width}}  {result}")


if __name__ == "__main__":
    main()
