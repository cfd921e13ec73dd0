"""The ``postgres`` session store at scale: 10,000 sessions, 8 concurrent writers (issue 26).

    python bench/postgres_store.py [--sessions 10000] [--writers 8] [--appends 300] [--url URL]

Without ``--url`` it starts Debian's PostgreSQL in a temp dir (tests/pg_helpers.py; fsync off, as
in the tests) and works in a fresh schema. It puts ``--sessions`` small sessions (2 turns each) in
one project, then, while ``--writers`` processes each append ``--appends`` entries to a session of
their own (the store API, timing every append: what a host pays per entry), a real
``atomic --mode rpc --session-store postgres`` host answers ``list_sessions``: the first listing
of the process, then the median of 10 warm ones (client-measured, to the complete response line).
Also printed: the host's connections to the server (``pg_stat_activity``) and its memory (VmRSS,
VmHWM) next to a JSONL host's, and what importing psycopg costs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "sessions" / "postgres"))

from pgs_helpers import cpu_ms, fill  # noqa: E402

WRITER = r"""
import json, sys, time
from builtin_plugins.stores import open_builtin_store
appends, cwd = int(sys.argv[1]), sys.argv[2]
store = open_builtin_store("postgres", "/nonexistent", None, cwd)
session = store.new_session(cwd)
session.append_message({"role": "user", "content": "go", "timestamp": 1})
session.append_message({"role": "assistant", "content": [], "provider": "p", "model": "m", "stopReason": "stop",
                        "timestamp": 2})
print("ready", flush=True)
sys.stdin.readline()
times = []
for i in range(appends):
    t = time.perf_counter()
    session.append_message({"role": "user", "content": [{"type": "text", "text": "x" * (i % 2000)}], "timestamp": i})
    times.append((time.perf_counter() - t) * 1000)
print(json.dumps(times), flush=True)
"""


def memory(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) // 1024
    return fields


async def host_listing(url: str, repeat: int, work: Path, start_writers: Any) -> dict[str, Any]:
    """A host's first and warm ``list_sessions``: once on a quiet database, then again in a second
    host while ``start_writers()`` keeps 8 processes appending."""
    from atomic_host.testing import start_host

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for phase in ("quiet", "writers"):
            if phase == "writers":
                start_writers()
            async with start_host("--session-store", "postgres", "--no-extensions", base=Path(tmp) / phase,
                                  env={"ATOMIC_DATABASE_URL": url}, cwd=work) as host:  # fmt: skip
                c = host.client
                await c.call("get_state")
                pid = c.proc.pid  # type: ignore[union-attr]
                out[f"{phase} memory at start"] = memory(pid)

                async def timed(c: Any = c, pid: int = pid) -> tuple[float, float, int]:
                    t, cpu = time.perf_counter(), cpu_ms(pid)
                    response = await c.call("list_sessions")
                    return (time.perf_counter() - t) * 1000, cpu_ms(pid) - cpu, len(response["sessions"])

                first, first_cpu, out["count"] = await timed()
                warm = [await timed() for _ in range(repeat)]
                out[phase] = (first, statistics.median(w[0] for w in warm))
                out[f"{phase} cpu"] = (first_cpu, statistics.median(w[1] for w in warm))
                out[f"{phase} memory after listing"] = memory(pid)
                out["connections"] = count_connections(url, pid)
        async with start_host("--no-extensions", base=Path(tmp) / "jsonl", cwd=work) as host:
            await host.client.call("get_state")
            out["jsonl memory at start"] = memory(host.client.proc.pid)  # type: ignore[union-attr]
    return out


def count_connections(url: str, pid: int) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE %s", (f"atomic pid {pid} %",)
        ).fetchone()
    return int(row[0]) if row else 0


def psycopg_import_ms() -> float:
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", "import psycopg"], capture_output=True, text=True)
    last = [line for line in done.stderr.splitlines() if line.rstrip().endswith("| psycopg")]
    return int(last[-1].split("|")[1]) / 1000 if last else float("nan")


async def run(args: argparse.Namespace, url: str) -> None:
    work = Path(tempfile.mkdtemp(prefix="atomic-bench-")).resolve()
    t = time.perf_counter()
    fill(url, args.sessions, str(work))
    print(f"put {args.sessions} sessions in {time.perf_counter() - t:.1f} s; load average {_load()}")
    env = {**os.environ, "ATOMIC_DATABASE_URL": url}
    command = [sys.executable, "-c", WRITER, str(args.appends), str(work)]
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE}
    writers = [subprocess.Popen(command, **pipes, text=True, env=env, cwd=ROOT) for _ in range(args.writers)]
    for w in writers:
        assert w.stdout is not None and w.stdout.readline().strip() == "ready"

    def start_writers() -> None:
        for w in writers:  # all at once
            assert w.stdin is not None
            w.stdin.write("go\n")
            w.stdin.flush()

    listing = await host_listing(url, 10, work, start_writers)
    times = []
    for w in writers:
        assert w.stdout is not None
        times += json.loads(w.stdout.readline())
        w.wait()
    times.sort()
    p50, p99 = times[len(times) // 2], times[int(len(times) * 0.99)]
    for phase in ("quiet", "writers"):
        first, warm = listing[phase]
        first_cpu, warm_cpu = listing[f"{phase} cpu"]
        print(f"list_sessions ({listing['count']} sessions, {phase}): first {first:.0f} ms, "
              f"warm median {warm:.0f} ms (targets 300 / 100); the host's CPU time: first {first_cpu:.0f} ms, "
              f"warm median {warm_cpu:.0f} ms")  # fmt: skip
    print(f"append ({len(times)} appends by {args.writers} concurrent writers): p50 {p50:.2f} ms, "
          f"p99 {p99:.2f} ms, max {times[-1]:.2f} ms (target p99 < 15); load average {_load()}")  # fmt: skip
    print(f"a host on postgres: {listing['connections']} connection(s) to the server")
    for key, value in listing.items():
        if "memory" in key:
            print(f"  {key}: {value} MB")
    print(f"import psycopg: {psycopg_import_ms():.0f} ms (paid only when the postgres store is chosen)")


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--appends", type=int, default=300)
    parser.add_argument("--url", help="an existing database (default: start a server in a temp dir)")
    args = parser.parse_args()
    if args.url:
        asyncio.run(run(args, args.url))
        return
    from pg_helpers import Postgres, postgres_bin

    bindir = postgres_bin()
    if bindir is None:
        raise SystemExit("PostgreSQL is not installed (apt-get install postgresql), and no --url was given")
    server = Postgres(bindir).start()
    try:
        asyncio.run(run(args, server.fresh_url()))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
