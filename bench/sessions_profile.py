"""Session read commands timed inside one host process: handler, encoding and write, no pipes.

Run: ``python bench/sessions_profile.py [--turns 2000] [--repeat 15] [--profile COMMAND]``.

It builds the runtime ``atomic --mode rpc`` builds (same plugins, a ``models.json`` with a local
model and an API key, as ``bench/table.py`` sets up, so secret masking is on as in real use) on a
temporary agent dir holding a 2-turn and a ``--turns``-turn session, opens the short one, and
times ``RpcServer.run`` of each command with stdout pointed at ``/dev/null``: what a command costs
the host, without the client's pipe and parse. ``switch_session`` alternates long / short so
every switch loads; every read command runs with the long session open. ``--profile COMMAND``
prints a cProfile of that command's repeats instead.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import sessions_store

from builtin_plugins.stores import open_builtin_store as open_store

MODEL = ("local", "m1")
READS = ("get_messages", "get_state", "get_session_stats", "get_fork_messages", "get_tree", "get_entries")
"""bench/table.py's order: get_state runs with the context already built by get_messages."""


def write_sessions(agent_dir: Path, cwd: str, turns: int, kind: str = "jsonl") -> tuple[str, str]:
    """A 2-turn and a ``turns``-turn session (bench/table.py's conversation): their ids."""
    store = open_store(kind, agent_dir, None, cwd, fsync="never")
    ids = []
    for n in (2, turns):
        session = store.new_session(cwd)
        session.append_model_change(*MODEL)
        session.append_thinking_level_change("off")
        for i in range(n):
            session.append_message(sessions_store._user(2 * i))
            answer = sessions_store._assistant(2 * i)
            session.append_message({**answer, "api": "openai-completions", "provider": MODEL[0], "model": MODEL[1]})
        ids.append(session.id)
        session.close()
    store.close()
    return ids[0], ids[1]


class InProcessHost:
    """The RPC runtime and command server of one host, in this process."""

    def __init__(self, root: Path, turns: int, kind: str = "jsonl") -> None:
        self.root = root
        agent = root / "agent"
        work = root / "work"
        agent.mkdir(parents=True)
        work.mkdir()
        providers = {
            MODEL[0]: {
                "baseUrl": "http://127.0.0.1:9/v1",
                "api": "openai-completions",
                "apiKey": "dummy-key-for-bench",
                "models": [{"id": MODEL[1], "contextWindow": 200000}],
            }
        }
        (agent / "models.json").write_text(json.dumps({"providers": providers}))
        os.environ["ATOMIC_CODING_AGENT_DIR"] = str(agent)
        self.cwd = str(work.resolve())
        self.kind = kind
        self.short_id, self.long_id = write_sessions(agent, self.cwd, turns, kind)
        self.turns = turns

    async def start(self) -> None:
        from atomic_host.core.jsonfast import load_fast_encoder
        from atomic_host.core.options import Options
        from atomic_host.frontends.rpc.handlers import Handlers
        from atomic_host.frontends.rpc.io import Output
        from atomic_host.frontends.rpc.server import RpcServer
        from atomic_host.frontends.rpc.ui import RpcUI
        from atomic_host.runtime import Runtime

        load_fast_encoder()
        import atomic_host.core.protocol.validate  # noqa: F401  (the host's warm-up imports it after its first response)
        out = Output(fd=os.open(os.devnull, os.O_WRONLY))
        opts = Options(
            mode="rpc",
            model="/".join(MODEL),
            session=self.short_id,
            cwd=self.cwd,
            session_store=self.kind if self.kind != "jsonl" else None,
        )
        self.rt = Runtime(opts, out, RpcUI(out, has_ui=True))
        await self.rt.start()
        table = Handlers(self.rt).table()

        async def nothing() -> None:
            return None

        self.server = RpcServer(out, table, nothing, concurrent=table.concurrent)
        self.responses: list[dict[str, Any]] = []
        out.listeners.append(self._record)

    def _record(self, record: dict[str, Any]) -> None:
        if record.get("type") == "response":
            self.responses.append(record)

    clock = staticmethod(time.perf_counter)
    """What ``run`` measures: wall time, or ``time.process_time`` (CPU of every thread, the
    figure that holds still on a loaded machine) with ``--cpu``."""

    async def run(self, command: dict[str, Any]) -> float:
        """One command through the server; ms. Raises when it failed."""
        self.responses.clear()
        start = self.clock()
        await self.server.run(command)
        elapsed = (self.clock() - start) * 1000
        response = self.responses[-1]
        if not response.get("success"):
            raise RuntimeError(f"{command['type']}: {response.get('error')}")
        return elapsed

    async def switch(self, long: bool) -> float:
        return await self.run({"type": "switch_session", "sessionId": self.long_id if long else self.short_id})


async def measure(ns: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="atomic-prof-") as tmp:
        host = InProcessHost(Path(tmp), ns.turns, ns.store)
        if ns.cpu:
            host.clock = time.process_time
        await host.start()
        await host.run({"type": "get_state"})
        profiler = cProfile.Profile() if ns.profile else None

        async def timed(command: dict[str, Any], samples: list[float]) -> None:
            if profiler and ns.profile == command["type"]:
                profiler.enable()
            elapsed = await host.run(command)
            if profiler:
                profiler.disable()
            samples.append(elapsed)

        def page(command: str) -> dict[str, Any]:
            cmd: dict[str, Any] = {"type": command}
            if command == "get_entries" and ns.since:
                cmd["since"] = host.rt.require_session().session.entries[-2]["id"]
            return cmd

        switch: list[float] = []
        first: dict[str, list[float]] = {c: [] for c in READS}
        again: dict[str, list[float]] = {c: [] for c in READS}
        for _i in range(ns.repeat + 1):  # cold: every read is the first one on a freshly opened session
            await timed({"type": "switch_session", "sessionId": host.long_id}, switch)
            for command in READS:
                await timed(page(command), first[command])
            await host.switch(False)
        await host.switch(True)
        for _ in range(ns.repeat + 1):  # warm: the same session, read again and again (bench/table.py)
            for command in READS:
                await timed(page(command), again[command])
        if profiler:
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)
            return
        clock = "CPU" if ns.cpu else "wall"
        print(f"{ns.store}, {ns.turns} turns, medians of {ns.repeat}, {clock} ms in process (min in brackets)")
        print(f"{'switch_session':<20} {statistics.median(switch[1:]):8.2f} ({min(switch[1:]):.2f})")
        print(f"{'':<20} {'first read':>17} {'read again':>20}")
        for command in READS:
            a, b = first[command][1:], again[command][1:]
            cold = f"{statistics.median(a):8.2f} ({min(a):6.2f})"
            warm = f"{statistics.median(b):8.2f} ({min(b):6.2f})"
            print(f"{command:<20} {cold}  {warm}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--store", choices=("jsonl", "sqlite"), default="jsonl")
    parser.add_argument("--since", action="store_true", help="get_entries with the cursor at the newest entry")
    parser.add_argument("--profile", help="print a cProfile of this command instead of timings")
    parser.add_argument("--cpu", action="store_true", help="CPU time of the process instead of wall time")
    asyncio.run(measure(parser.parse_args()))


if __name__ == "__main__":
    main()
