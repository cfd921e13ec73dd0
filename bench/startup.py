"""Startup benchmark: spawn ``atomic --mode rpc`` → first ``get_state`` response.

    python bench/startup.py [-n 15] [--top 15] [--instructions] [--plain]

Prints the median / min / max of N spawns (every built-in plugin registered, faux provider, a
fresh agent dir) and, spawned the same way in turns with them, the interpreter floor of issue 12
(``python -c "import asyncio"`` from the same venv; goal: the host within 1.3x of it), each also as
CPU time (the process's own, read when its first line arrives: steadier than wall time on a loaded
machine), then a ``python -X importtime`` run summarised as the top cumulative imports.

``--instructions`` adds the count that does not move with the machine's load: instructions of the
main thread under ``valgrind --tool=callgrind`` (the host answering one get_state, then EOF; the
floor), with the .pyc cache warm. The warm-up thread and the loop watchdog are threads of their
own and not counted. Takes ~30 s; needs valgrind.

``--plain`` starts the host with ``ATOMIC_PLAIN=1`` (no speed tactic: docs/performance.md).
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

GET_STATE = b'{"type":"get_state","id":"s"}\n'


PLAIN = False
"""Start the host with ``ATOMIC_PLAIN=1`` (``--plain``)."""
PYCACHE: str | None = None
"""Bytecode cache dir (``PYTHONPYCACHEPREFIX``) for the "installed" runs; None = compile every time."""


def _env(agent_dir: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_") and not k.endswith("_API_KEY")}
    env["ATOMIC_CODING_AGENT_DIR"] = agent_dir
    if PLAIN:
        env["ATOMIC_PLAIN"] = "1"
    if PYCACHE is not None:
        # An installed host has .pyc files; keep them in a private dir, not in the repo.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = PYCACHE
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


HOST = [sys.executable, "-m", "atomic_host", "--mode", "rpc", "--provider", "faux"]
FLOOR = [sys.executable, "-c", "import asyncio"]


def time_first_response(agent_dir: str, cwd: str) -> float:
    """Seconds from spawn to the first complete stdout line (the get_state response)."""
    return first_line(HOST, agent_dir, cwd)[0]


def first_line(command: list[str], agent_dir: str, cwd: str) -> tuple[float, float]:
    """(wall seconds to the first stdout line or EOF, CPU seconds of the process by then)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_env(agent_dir), cwd=cwd
    )
    assert proc.stdin and proc.stdout
    try:
        proc.stdin.write(GET_STATE)
        proc.stdin.flush()
    except BrokenPipeError:
        pass  # the floor exits without reading
    line = proc.stdout.readline()
    elapsed = time.perf_counter() - start
    cpu = _cpu_s(proc.pid)
    try:
        proc.stdin.close()
    except BrokenPipeError:
        pass
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    if command is HOST and b'"success":true' not in line:
        raise RuntimeError(f"unexpected first line: {line[:200]!r}")
    return elapsed, cpu if cpu is not None else usage.ru_utime + usage.ru_stime


def _cpu_s(pid: int) -> float | None:
    """CPU time of all of ``pid``'s threads so far (Linux schedstat), None elsewhere or once it exited."""
    try:
        return sum(
            int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0]) for tid in os.listdir(f"/proc/{pid}/task")
        ) / 1e9
    except (OSError, ValueError):
        return None


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


def instructions(command: list[str], agent_dir: str, cwd: str, out_dir: str) -> int:
    """Instructions callgrind counts in the main thread of ``command`` (fed one get_state, then EOF)."""
    subprocess.run(command, input=GET_STATE, capture_output=True, env=_env(agent_dir), cwd=cwd, timeout=60)  # warm
    prefix = os.path.join(out_dir, f"cg-{len(os.listdir(out_dir))}")
    valgrind = ["valgrind", "--tool=callgrind", "--separate-threads=yes", f"--callgrind-out-file={prefix}.%p"]
    subprocess.run(valgrind + command, input=GET_STATE, capture_output=True, env=_env(agent_dir), cwd=cwd, timeout=600)
    # --separate-threads writes <file>-01 for the main thread (and nothing suffixed for one thread)
    files = sorted(glob.glob(prefix + ".*-01")) or sorted(glob.glob(prefix + ".*"))
    with open(files[0]) as f:
        return next(int(line.split()[1]) for line in f if line.startswith("summary:"))


def main() -> None:
    global PYCACHE, PLAIN
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=15, help="number of spawns (default 15)")
    ap.add_argument("--top", type=int, default=15, help="imports to list (default 15)")
    ap.add_argument("--instructions", action="store_true", help="also count instructions with callgrind")
    ap.add_argument("--plain", action="store_true", help="the host with ATOMIC_PLAIN=1 (no speed tactics)")
    ns = ap.parse_args()
    PLAIN = ns.plain
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
        host: list[tuple[float, float]] = []
        floor: list[tuple[float, float]] = []
        for i in range(ns.n):  # in turns, so both see the same load
            pair = [(host, HOST), (floor, FLOOR)]
            for out, command in pair if i % 2 else pair[::-1]:
                out.append(first_line(command, agent_dir, cwd))
        for label, runs in (("floor: python -c 'import asyncio'", floor), ("host, in turns with the floor", host)):
            wall = statistics.median(w for w, _ in runs) * 1000
            cpu = statistics.median(c for _, c in runs) * 1000
            print(f"{label:<40}{wall:>10.1f}   (CPU {cpu:.1f} ms)")
        ratio = statistics.median(w for w, _ in host) / statistics.median(w for w, _ in floor)
        cpu_ratio = statistics.median(c for _, c in host) / statistics.median(c for _, c in floor)
        print(f"{'host / floor (goal <= 1.3)':<40}{ratio:>10.2f}   (CPU {cpu_ratio:.2f})")
        if ns.instructions and shutil.which("valgrind"):
            cg_dir = os.path.join(tmp, "callgrind")
            os.makedirs(cg_dir)
            floor_ir, host_ir = (instructions(c, agent_dir, cwd, cg_dir) for c in (FLOOR, HOST))
            print(f"{'instructions, floor (callgrind)':<40}{floor_ir / 1e6:>9.1f}M")
            print(f"{'instructions, host (main thread)':<40}{host_ir / 1e6:>9.1f}M   ({host_ir / floor_ir:.2f}x)")
        elif ns.instructions:
            print("--instructions: valgrind not found")
        print()
        print(f"top {ns.top} cumulative imports (python -X importtime, one get_state then EOF)")
        print(f"{'cumulative ms':>14}{'self ms':>10}  module")
        for cum, self_us, name in importtime(agent_dir, cwd, ns.top):
            print(f"{cum / 1000:>14.1f}{self_us / 1000:>10.1f}  {name}")


if __name__ == "__main__":
    main()
