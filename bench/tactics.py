"""Each speed tactic of ``atomic_host/kit/_fast`` against the library path it replaces (docs/performance.md).

    python bench/tactics.py [--runs 15] [--only NAME ...]

For every tactic: the CPU time (``time.process_time``: this process, or the fresh one a start-up
tactic runs in) of the plain path (what ``ATOMIC_PLAIN=1`` runs) and of the tactic, medians of
``--runs``, the two taking turns so both see the same load, and their ratio. The whole-host
effect of all of them at once is ``bench/table.py`` against ``bench/table.py --plain`` and
``bench/startup.py --instructions [--plain]``.

- ``http1``: one 200-delta OpenAI-chat reply from bench/table.py's local SSE server (another
  process) read through ``sse_batches``: httpx's transport against ``DirectPool``.
- ``event_json``: decoding the reply's 203 event payloads: ``json.loads`` against orjson's path.
- ``json_encoder``: ``get_messages``-shaped data of 2,000 turns encoded: the standard encoder
  against orjson's.
- ``json_copy``: a copy of every built-in catalog model: ``copy.deepcopy`` against ``json_copy``.
- ``collector``: parsing a 20,000-entry session file (``parse_records``) with the collector
  running against paused; then the same parse with ``json.loads`` per line against jiter.
- ``argv``: a fresh interpreter reading ``--mode rpc --provider faux --no-session``: argparse (its
  import and parser included) against ``quick_values``.
- ``pluggy``: registering every built-in plugin and the hookspecs: pluggy's ``PluginManager``
  against ``QuickPluginManager``.
- ``dist_info``: a fresh interpreter looking for ``atomic_host`` entry points: importlib_metadata
  against ``group_declared``.
- ``httpx_cli``: a fresh interpreter importing the kit's HTTP module (httpx with it) with click
  installed: httpx's own ``httpx._main`` against the stand-in.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import importlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))


def pair(plain: Callable[[], float], fast: Callable[[], float], runs: int) -> tuple[float, float]:
    """Median seconds of each, the two taking turns (the order flips every round)."""
    times: dict[str, list[float]] = {"plain": [], "fast": []}
    plain(), fast()  # warm: imports, caches, connections
    for i in range(runs):
        order = [("plain", plain), ("fast", fast)]
        for name, run in order if i % 2 else order[::-1]:
            times[name].append(run())
    return statistics.median(times["plain"]), statistics.median(times["fast"])


def cpu(fn: Callable[[], Any]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def fresh(code: str, env: dict[str, str] | None = None) -> float:
    """CPU seconds ``code`` takes in a fresh interpreter (it prints them itself)."""
    import os

    out = subprocess.run(
        [sys.executable, "-c", f"import time\n_t = time.process_time()\n{code}\nprint(time.process_time() - _t)"],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


# -- the tactics ------------------------------------------------------------------------------------


def bench_http1(runs: int) -> tuple[float, float]:
    from table import Server

    from atomic_host.contract.providers import StreamOptions
    from atomic_host.kit.llm.http import sse_batches
    from atomic_host.kit.llm.http_client import new_http_client

    server = Server()
    loop = asyncio.new_event_loop()
    fast_client = new_http_client()
    plain_client = new_http_client()
    plain_client.direct = None
    url = f"{server.base_url}/chat/completions"
    body = {"model": "m1", "stream": True, "messages": [{"role": "user", "content": "hi"}]}

    async def one(client: Any) -> None:
        options = StreamOptions(http_client=client)
        async for _ in sse_batches(url, {"content-type": "application/json"}, body, options):
            pass

    try:
        return pair(
            lambda: cpu(lambda: loop.run_until_complete(one(plain_client))),
            lambda: cpu(lambda: loop.run_until_complete(one(fast_client))),
            runs,
        )
    finally:
        loop.run_until_complete(fast_client.aclose())
        loop.run_until_complete(plain_client.aclose())
        loop.close()
        server.close()


def bench_event_json(runs: int) -> tuple[float, float]:
    import agent_run

    from atomic_host.kit._fast.event_json import loads

    payloads = [json.dumps(frame) for frame in _chunks(agent_run.reply())] * 50

    def decode(fn: Callable[[str], Any]) -> float:
        return cpu(lambda: [fn(p) for p in payloads]) / 50

    return pair(lambda: decode(json.loads), lambda: decode(loads), runs)


def _chunks(frames: list[Any]) -> list[Any]:
    out = []
    for frame in frames:
        frame = frame[1] if isinstance(frame, tuple) else frame
        text = frame.decode() if isinstance(frame, bytes) else str(frame)
        for line in text.splitlines():
            if line.startswith("data: {"):
                out.append(json.loads(line[6:]))
    return out


def bench_json_encoder(runs: int) -> tuple[float, float]:
    from atomic_host.core import jsonfast

    messages = []
    for i in range(2000):
        messages.append({"role": "user", "content": [{"type": "text", "text": f"question {i} " * 20}], "timestamp": i})
        messages.append(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": f"answer {i} " * 60}],
                "usage": {"input": 100, "output": 200, "cost": {"total": 0.001}},
                "stopReason": "stop",
                "timestamp": i,
            }
        )
    record = {"type": "response", "command": "get_messages", "success": True, "data": {"messages": messages}}

    def encode(fast: bool) -> float:
        saved = jsonfast._fast
        if fast:
            jsonfast.load_fast_encoder()
        else:
            jsonfast._fast = None
        try:
            return cpu(lambda: jsonfast.dumpb(record))
        finally:
            jsonfast._fast = saved

    return pair(lambda: encode(False), lambda: encode(True), runs)


def bench_json_copy(runs: int) -> tuple[float, float]:
    from atomic_host.kit._fast.json_copy import json_copy

    catalog = json.loads((ROOT / "builtin_plugins" / "catalog" / "catalog.json").read_text())
    models = [m for p in catalog.values() if isinstance(p, dict) for m in p.get("models", [])] or [catalog]

    return pair(
        lambda: cpu(lambda: [copy.deepcopy(m) for m in models]),
        lambda: cpu(lambda: [json_copy(m) for m in models]),
        runs,
    )


def _session_bytes(entries: int) -> bytes:
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/"}
    lines = [json.dumps(header)]
    for i in range(entries):
        role = "user" if i % 2 == 0 else "assistant"
        message = {"role": role, "content": [{"type": "text", "text": f"turn {i} " * 10}], "timestamp": i}
        entry = {"type": "message", "id": f"{i:08x}", "parentId": f"{i - 1:08x}" if i else None}
        lines.append(json.dumps({**entry, "timestamp": "2026-01-01T00:00:00.000Z", "message": message}))
    return ("\n".join(lines) + "\n").encode()


def bench_collector(runs: int) -> tuple[float, float]:
    import contextlib

    from atomic_host.kit.sessions import jsonl

    data = _session_bytes(20_000)
    paused = jsonl.gc_paused

    def parse(pause: bool) -> float:
        jsonl.gc_paused = paused if pause else (lambda then="resume": contextlib.nullcontext())
        try:
            return cpu(lambda: jsonl.parse_records(data))
        finally:
            jsonl.gc_paused = paused

    return pair(lambda: parse(False), lambda: parse(True), runs)


def bench_jiter(runs: int) -> tuple[float, float]:
    from atomic_host.kit import _fast
    from atomic_host.kit.sessions import jsonl

    data = _session_bytes(20_000)

    def parse(plain: bool) -> float:
        saved, _fast.PLAIN = _fast.PLAIN, plain
        try:
            return cpu(lambda: jsonl.parse_records(data))
        finally:
            _fast.PLAIN = saved

    return pair(lambda: parse(True), lambda: parse(False), runs)


ARGV = "['--mode', 'rpc', '--provider', 'faux', '--no-session']"


def bench_argv(runs: int) -> tuple[float, float]:
    setup = "from atomic_host.frontends import cli\n_t = time.process_time()\n"
    return pair(
        lambda: fresh(setup + f"cli.parse_options({ARGV})"),
        lambda: fresh(setup + f"cli.quick_options({ARGV})"),
        runs,
    )


def bench_pluggy(runs: int) -> tuple[float, float]:
    import pluggy

    from atomic_host.contract import hookspecs
    from atomic_host.contract.markers import PROJECT_NAME
    from atomic_host.kit._fast.pluggy_register import QuickPluginManager
    from atomic_host.plugins.discovery import BUILTIN_PLUGINS

    modules = [(name, importlib.import_module(name)) for name in BUILTIN_PLUGINS]

    def register(kind: type[pluggy.PluginManager]) -> float:
        def run() -> None:
            pm = kind(PROJECT_NAME)
            pm.add_hookspecs(hookspecs)
            for name, module in modules:
                pm.register(module, name=name)

        return cpu(run)

    return pair(lambda: register(pluggy.PluginManager), lambda: register(QuickPluginManager), runs)


def bench_dist_info(runs: int) -> tuple[float, float]:
    return pair(
        lambda: fresh("import importlib_metadata\nlist(importlib_metadata.entry_points(group='atomic_host'))"),
        lambda: fresh("from atomic_host.kit._fast.dist_info import group_declared\ngroup_declared('atomic_host')"),
        runs,
    )


def bench_httpx_cli(runs: int) -> tuple[float, float]:
    code = "import atomic_host.kit.llm.http"
    return pair(lambda: fresh(code, {"ATOMIC_PLAIN": "1"}), lambda: fresh(code, {"ATOMIC_PLAIN": "0"}), runs)


TACTICS: dict[str, Callable[[int], tuple[float, float]]] = {
    "http1": bench_http1,
    "event_json": bench_event_json,
    "json_encoder": bench_json_encoder,
    "json_copy": bench_json_copy,
    "collector": bench_collector,
    "jiter": bench_jiter,
    "argv": bench_argv,
    "pluggy": bench_pluggy,
    "dist_info": bench_dist_info,
    "httpx_cli": bench_httpx_cli,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="timed runs of each path (default 15)")
    parser.add_argument("--only", nargs="*", choices=sorted(TACTICS), help="these tactics only")
    ns = parser.parse_args()
    print(f"{'tactic':<14}{'plain ms':>10}{'tactic ms':>11}{'plain/tactic':>14}   (CPU, medians of {ns.runs})")
    with tempfile.TemporaryDirectory():
        for name, bench in TACTICS.items():
            if ns.only and name not in ns.only:
                continue
            plain, fast = bench(ns.runs)
            ratio = plain / fast if fast else float("inf")
            print(f"{name:<14}{plain * 1000:>10.3f}{fast * 1000:>11.3f}{ratio:>13.1f}x")


if __name__ == "__main__":
    main()
