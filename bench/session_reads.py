"""The big read responses of bench/table.py's 2,000-turn session, host against host, interleaved.

    python bench/session_reads.py [--host NAME=PYTHON ...] [--runs 15] [--turns 2000] [--api-key KEY]
                                  [--commands get_entries get_tree get_messages] [--sqlite-sessions N]

Each ``--host`` is a Python whose ``-m atomic_host`` is started (default: this one), e.g. the venv
of a main checkout against the venv of a branch, so before and after run side by side on the same
load. Every host gets the table's sandbox and sessions (``bench/table.py``: the local model, a
2-turn and a ``--turns``-turn session), switches to the long one and answers each command
``--runs`` times after one warm-up, the hosts taking turns every round. Printed per command and
host: the median client-measured time to the complete response line, the median CPU the host
process spent on it (``/proc/<pid>/task/*/schedstat``: every thread, nanoseconds, so it holds on
a loaded machine), and at the end each host's VmHWM. ``--api-key`` puts a key into models.json
(8+ characters: the host registers it as a credential), so every response goes through masking.

``--sqlite-sessions N``: instead, ``list_sessions`` over N small sessions in the SQLite store
(bench/sessions_rpc.py's listing: one 2-turn session put N times), each host on its own copy.

``--floor``: one more "host", a process that answers each command at once with a line as long as
the first host's last answer to it, written with one ``writev`` into a 1 MiB pipe: what moving
those bytes to the client costs on this machine, with no work at all.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import table  # (the sandbox, the sessions and the timed client of the issue-12 table)


def cpu_ns(pid: int) -> int:
    """CPU time of every thread of ``pid`` so far."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that ended meanwhile
    return total


def serve_floor() -> None:
    """The ``--floor`` process: each command line gets a response line of its ``size`` at once."""
    import fcntl
    import os

    try:
        fcntl.fcntl(1, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)  # as the host widens its stdout
    except OSError:
        pass
    for line in sys.stdin.buffer:
        command = json.loads(line)
        head = json.dumps({"id": command["id"], "type": "response", "command": command["type"], "success": True})
        head = head[:-1].encode() + b',"data":"'
        os.writev(1, [head, b"x" * max(0, command["size"] - len(head) - 2), b'"}\n'])


def sqlite_sessions(root: Path, cwd: Path, count: int) -> list[str]:
    """``count`` copies of a 2-turn session in the SQLite store of ``root``'s agent dir: the
    ``--session`` args of the first."""
    from sessions_store import fill

    from atomic_host.kit.sessions.store import MemoryStore, new_header
    from builtin_plugins.stores import open_builtin_store as open_store

    template = fill(MemoryStore(), 2)
    store = open_store("sqlite", root / "agent", None, str(cwd), fsync="never")
    first = None
    for _ in range(count):
        session = store.put(new_header(str(cwd)), template.entries)
        first = first or session.id
        session.close()
    store.close()
    return ["--session-store", "sqlite", "--session", str(first)]


async def start(name: str, python: str, root: Path, ns: argparse.Namespace) -> tuple[Any, int]:
    agent = table.Agent(name, [python, "-m", "atomic_host", "--mode", "rpc"], "ATOMIC_CODING_AGENT_DIR")
    env, cwd = agent.sandbox(root, "http://127.0.0.1:9")
    if ns.api_key is not None:
        models = json.loads((root / "agent" / "models.json").read_text())
        models["providers"]["local"]["apiKey"] = ns.api_key
        (root / "agent" / "models.json").write_text(json.dumps(models))
    if ns.sqlite_sessions:
        args, long = sqlite_sessions(root, cwd, ns.sqlite_sessions), None
    else:
        args, ((_short, long), _size) = table.session_files(ns.turns)(agent, root, cwd)
    client = await table.open_client(agent, ["--model", "/".join(table.MODEL), *args], env, cwd, root / "err.log")
    await client.ok({"type": "get_state"} if long is None else {"type": "switch_session", **long})
    await asyncio.sleep(1.0)  # the host's warm-up thread (orjson, pydantic) is done
    assert client.proc is not None
    return client, client.proc.pid


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", action="append", default=[], help="NAME=PYTHON (repeatable)")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--commands", nargs="+", default=["get_entries", "get_tree", "get_messages"])
    parser.add_argument("--sqlite-sessions", type=int, default=0)
    parser.add_argument("--floor", action="store_true", help="add the do-nothing writer (see the docstring)")
    parser.add_argument("--serve-floor", action="store_true", help=argparse.SUPPRESS)
    ns = parser.parse_args()
    if ns.serve_floor:
        serve_floor()
        return
    if ns.sqlite_sessions:
        ns.commands = ["list_sessions"]
    hosts = [tuple(h.split("=", 1)) for h in ns.host] or [("this", sys.executable)]
    with tempfile.TemporaryDirectory(prefix="atomic-reads-") as tmp:
        clients = [await start(name, py, Path(tmp) / name, ns) for name, py in hosts]
        if ns.floor:
            floor = table.TimedClient([], command=[sys.executable, __file__, "--serve-floor"], cwd=tmp, env=None)
            await floor.start()
            assert floor.proc is not None
            hosts, clients = [*hosts, ("floor", "")], [*clients, (floor, floor.proc.pid)]
        wall: dict[tuple[str, str], list[float]] = {}
        cpu: dict[tuple[str, str], list[float]] = {}
        sizes: dict[tuple[str, str], int] = {}
        try:
            for command in ns.commands:
                for i in range(ns.runs + 1):
                    order = clients if i % 2 else clients[::-1]
                    for (name, _), (client, pid) in zip(hosts if i % 2 else hosts[::-1], order, strict=True):
                        await asyncio.sleep(0.03)
                        before = cpu_ns(pid)
                        sent = {"type": command}
                        if name == "floor":
                            sent["size"] = sizes.get((command, hosts[0][0]), 1000)
                        elapsed, _ = await client.ok(sent)
                        used = (cpu_ns(pid) - before) / 1e6
                        sizes[(command, name)] = max(map(len, client.lines), default=0)
                        client.lines.clear()
                        if i:
                            wall.setdefault((command, name), []).append(elapsed)
                            cpu.setdefault((command, name), []).append(used)
            hwm = {name: table.vm_hwm_kib(pid) / 1024 for (name, _), (_, pid) in zip(hosts, clients, strict=True)}
        finally:
            for client, _ in clients:
                await client.close()
    print(f"{'command':<14}{'host':<10}{'ms (median)':>12}{'min':>8}{'cpu ms':>9}{'line MB':>9}")
    for command in ns.commands:
        for name, _ in hosts:
            w, c = wall[(command, name)], cpu[(command, name)]
            print(
                f"{command:<14}{name:<10}{statistics.median(w):>12.2f}{min(w):>8.2f}"
                f"{statistics.median(c):>9.2f}{sizes[(command, name)] / 1e6:>9.2f}"
            )
    for name, mib in hwm.items():
        print(f"VmHWM {name}: {mib:.1f} MiB")
    print(f"load average: {' '.join(f'{x:.2f}' for x in __import__('os').getloadavg())}; {time.strftime('%H:%M:%S')}")


if __name__ == "__main__":
    asyncio.run(main())
