"""``atomic worker``: run workflow stages of one or more projects with no client attached.

The process loads the plugins as a host would, asks the ``workflows`` service to serve the given
projects (it listens to their queues and recovers the runs of dead executors) and waits for
SIGTERM or SIGINT. Its log goes to stderr; it writes nothing to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

from atomic_host.core.options import Options


def _parser():
    p = argparse.ArgumentParser(
        prog="atomic worker",
        description="Run the workflow stages of PROJECT directories (default: the current directory) with no "
        "client attached, from the database set by DBOS_SYSTEM_DATABASE_URL or settings workflows.databaseUrl; "
        "recover the runs of dead hosts. Stops on SIGTERM or Ctrl-C (its runs are recovered elsewhere).",
    )
    p.add_argument("projects", nargs="*", metavar="PROJECT", help="a project directory to serve (repeatable)")
    p.add_argument("--session-dir", metavar="DIR", help="directory that holds the session store")
    p.add_argument("--session-store", metavar="KIND", help="session store kind (as for atomic)")
    p.add_argument("--approve", action="store_true", default=None, help="trust the first project's .atomic directory")
    return p


def worker(argv: list[str], make_runtime: Callable[[Any], Any]) -> int:
    """Parse ``argv``, build the runtime with ``make_runtime(options)`` and serve until a signal."""
    ns = _parser().parse_args(argv)
    projects = [os.path.realpath(p) for p in ns.projects] or [os.path.realpath(os.getcwd())]
    missing = [p for p in projects if not os.path.isdir(p)]
    if missing:
        print(f"atomic worker: not a directory: {', '.join(missing)}", file=sys.stderr)
        return 2
    rt = make_runtime(
        Options(cwd=projects[0], session_dir=ns.session_dir, session_store=ns.session_store, approve=ns.approve)
    )
    rt.load_plugins()
    return asyncio.run(_serve(rt, projects))


async def _serve(rt, projects: list[str]) -> int:
    await rt.hooks.acall("host_start")
    engine = rt.services.get("workflows")
    if engine is None:
        print("atomic worker: the workflows plugin is not loaded (disabledPlugins?)", file=sys.stderr)
        return 2
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        executor = await engine.serve(projects)
    except Exception as exc:
        print(f"atomic worker: cannot serve workflows: {type(exc).__name__}: {exc}", file=sys.stderr)
        await rt.hooks.acall("host_shutdown")
        return 1
    print(f"atomic worker: serving {', '.join(projects)} as executor {executor}", file=sys.stderr, flush=True)
    await stop.wait()
    print("atomic worker: stopping", file=sys.stderr, flush=True)
    await rt.hooks.acall("host_shutdown")
    return 0
