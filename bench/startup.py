"""Startup benchmark: spawn ``atomic --mode rpc`` → first ``get_state`` response.

    python bench/startup.py [-n 15] [--top 15]

Prints the median / min / max of N spawns (every built-in plugin registered, faux provider, a
fresh agent dir), then a ``python -X importtime`` run summarised as the top cumulative imports.
Target: 150 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

GET_STATE = b'{"type":"get_state","id":"s"}\n'


PYCACHE: str | None = None
"""Bytecode cache dir (``PYTHONPYCACHEPREFIX``) for the "installed" runs; None = compile every time."""


def _env(agent_dir: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_") and not k.endswith("_API_KEY")}
    env["ATOMIC_CODING_AGENT_DIR"] = agent_dir
    if PYCACHE is not None:
        # An installed host has .pyc files; keep them in a private dir, not in the repo.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = PYCACHE
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def time_first_response(agent_dir: str, cwd: str) -> float:
    """Seconds from spawn to the first complete stdout line (the get_state response)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "atomic_host", "--mode", "rpc", "--provider", "faux"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=_env(agent_dir),
        cwd=cwd,
    )
    assert proc.stdin and proc.stdout
    proc.stdin.write(GET_STATE)
    proc.stdin.flush()
    line = proc.stdout.readline()
    elapsed = time.perf_counter() - start
    proc.stdin.close()
    proc.wait(10)
    if b'"success":true' not in line:
        raise RuntimeError(f"unexpected first line: {line[:200]!r}")
    return elapsed


def importtime(agent_dir: str, cwd: str, top: int) -> list[tuple[int, int, str]]:
    """``-X importtime`` of one get_state + EOF: (cumulative µs, self µs, module), largest first."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "atomic_host", "--mode", "rpc", "--provider", "faux"],
        input=GET_STATE,
        capture_output=True,
        env=_env(agent_dir),
        cwd=cwd,
        timeout=60,
    )
    rows = []
    for line in proc.stderr.decode(errors="replace").splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        self_us, cum_us, name = (part.strip() for part in line[len("import time:") :].split("|", 2))
        rows.append((int(cum_us), int(self_us), name))
    rows.sort(reverse=True)
    return rows[:top]


def main() -> None:
    global PYCACHE
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=15, help="number of spawns (default 15)")
    ap.add_argument("--top", type=int, default=15, help="imports to list (default 15)")
    ns = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="atomic-bench-") as tmp:
        agent_dir, cwd = os.path.join(tmp, "agent"), os.path.join(tmp, "work")
        os.makedirs(agent_dir)
        os.makedirs(cwd)
        print(f"{'metric':<40}{'ms':>10}")
        for label, cache in (
            ("with .pyc cache", os.path.join(tmp, "pycache")),
            ("no .pyc (compile each run)", None),
        ):
            PYCACHE = cache
            time_first_response(agent_dir, cwd)  # warm the .pyc cache and the page cache
            runs = [time_first_response(agent_dir, cwd) * 1000 for _ in range(ns.n)]
            print(
                f"{'spawn -> get_state, ' + label:<40}{statistics.median(runs):>10.1f}"
                f"   (min {min(runs):.1f}, max {max(runs):.1f}, n={ns.n})"
            )
        PYCACHE = os.path.join(tmp, "pycache")
        bare = statistics.median(
            _time(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True)) for _ in range(5)
        )
        print(f"{'bare python -c pass (reference)':<40}{bare * 1000:>10.1f}")
        print(f"{'target':<40}{150:>10}")
        print()
        print(f"top {ns.top} cumulative imports (python -X importtime, one get_state then EOF)")
        print(f"{'cumulative ms':>14}{'self ms':>10}  module")
        for cum, self_us, name in importtime(agent_dir, cwd, ns.top):
            print(f"{cum / 1000:>14.1f}{self_us / 1000:>10.1f}  {name}")


def _time(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
