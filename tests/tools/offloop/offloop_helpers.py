"""Helpers for the off-the-event-loop tool tests: big generated trees, /proc probes, latency probes."""

from __future__ import annotations

import asyncio
import os
import random
import time
from pathlib import Path
from typing import Any

from atomic_host.client import RpcClient

WORDS = [
    *("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda"),
    *("mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega"),
    *("def", "class", "return", "import", "yield", "async", "await", "None", "True", "False"),
]


def make_big_tree(root: Path, *, dirs: int = 200, files_per_dir: int = 150, big_files: int = 3) -> int:
    """A deterministic tree of ``dirs * files_per_dir`` small text files plus a few multi-MB ones.

    No file contains the word ``NEEDLE``, so a search for it visits everything. Returns the number
    of files written.
    """
    rng = random.Random(8)
    root.mkdir(parents=True, exist_ok=True)
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    count = 0
    for d in range(dirs):
        sub = root / f"pkg{d // 20:02d}" / f"mod{d:03d}"
        sub.mkdir(parents=True, exist_ok=True)
        for f in range(files_per_dir):
            lines = [" ".join(rng.choices(WORDS, k=8)) for _ in range(12)]
            (sub / f"file{f:03d}.py").write_text("\n".join(lines) + "\n")
            count += 1
    line = " ".join(WORDS) + "\n"
    for b in range(big_files):
        (root / f"big{b}.txt").write_text(line * (4 * 1024 * 1024 // len(line)))
        count += 1
    return count


def heavy_gitignore(rules: int = 1500) -> str:
    """A monorepo-sized .gitignore: ``rules`` patterns of every kind, a negation every 500."""
    kinds = ("*.ext{}", "cache{}/", "/out{}", "**/tmp{}/*.bak", "gen_*_{}.py")
    lines = ["*.log", "build/"]
    for i in range(rules):
        lines.append(kinds[i % len(kinds)].format(i))
        if i % 500 == 499:
            lines.append(f"!keep{i}.log")
    return "\n".join(lines) + "\n"


def make_wide_tree(root: Path, *, dirs: int = 200, files_per_dir: int = 150) -> int:
    """Empty files under a heavy .gitignore: a walk that costs seconds, for find."""
    root.mkdir(parents=True, exist_ok=True)
    (root / ".gitignore").write_text(heavy_gitignore())
    for d in range(dirs):
        sub = root / f"area{d // 20:02d}" / f"part{d:03d}"
        sub.mkdir(parents=True, exist_ok=True)
        for f in range(files_per_dir):
            (sub / f"item{f:03d}.txt").touch()
    return dirs * files_per_dir


def proc_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def proc_threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def proc_children(pid: int) -> list[int]:
    """Live child processes of ``pid`` (zombies excluded)."""
    out: list[int] = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            text = Path(f"/proc/{pid}/task/{tid}/children").read_text()
        except OSError:
            continue
        for child in text.split():
            try:
                state = Path(f"/proc/{child}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
            except OSError:
                continue
            if state not in (b"Z", b"X"):
                out.append(int(child))
    return out


def host_pid(client: RpcClient) -> int:
    assert client.proc is not None
    return client.proc.pid


async def timed(coro: Any) -> tuple[Any, float]:
    """Await ``coro``; return its value and how long it took in seconds."""
    start = time.perf_counter()
    value = await coro
    return value, time.perf_counter() - start


async def get_state_latencies(client: RpcClient, duration: float, interval: float = 0.05) -> list[float]:
    """Ping ``get_state`` for ``duration`` seconds; return each round trip in seconds."""
    latencies: list[float] = []
    end = time.perf_counter() + duration
    while time.perf_counter() < end:
        _, took = await timed(client.get_state())
        latencies.append(took)
        await asyncio.sleep(interval)
    return latencies
