"""``atomic --mode rpc``: start the runtime and serve JSONL until stdin closes."""

from __future__ import annotations

import asyncio
import os
import stat
import sys
import threading
from collections.abc import Coroutine
from typing import Any

from atomic_host.core.options import Options
from atomic_host.frontends.rpc.io import Output, flush_all
from atomic_host.kit import _fast
from atomic_host.kit._fast.collector import start_done
from atomic_host.kit.log import log
from atomic_host.plugins.faults import host_exit
from atomic_host.runtime import Runtime


def _prewarm(tools: list[Any], needs_http: bool = False) -> None:
    """Import what later commands need off the critical path, so the first prompt does not import
    on the event loop: first the host's own modules of a run (the agent loop, tool execution,
    compaction: a prompt right after the first response would otherwise import them on the loop
    while this thread holds the GIL for pydantic), the session file format (the first reply's
    write) and session navigation (new_session, fork, …), then orjson, httpx (and, when the
    session's model is reached over HTTP, the TLS context: the CA bundle the first prompt would
    otherwise wait for), the pydantic protocol models and the tools' modules and schemas."""
    try:
        # the warm-up itself: what the first prompt would otherwise import on the loop (tests/perf/startup_imports)
        import atomic_host.agent.loop
        import atomic_host.agent.tool_exec
        import atomic_host.engine.compaction
        import atomic_host.engine.navigation
        import atomic_host.kit.sessions.jsonl
        from atomic_host.core.jsonfast import load_fast_encoder

        if not _fast.PLAIN:
            load_fast_encoder()
        import httpx  # noqa: F401

        if needs_http:
            # the warm-up: the TLS context (kit.llm.http_client imports httpx)
            from atomic_host.kit.llm.http_client import tls_context

            tls_context()
        # the warm-up: the pydantic protocol models
        import atomic_host.core.protocol.validate  # noqa: F401

        for tool in tools:
            tool.json_schema()
    except Exception:  # only a warm-up: the real import reports errors
        pass


def claim_stdout() -> int:
    """Reserve the real stdout for protocol records; return a private dup of it.

    fd 1 is then pointed at stderr, so ``print`` in a plugin (at import or later) and child
    processes that inherit fd 1 land in the log, never in the JSONL stream. Call it before any
    plugin is imported.
    """
    sys.stdout.flush()
    protocol_fd = os.dup(1)  # non-inheritable: children never get the protocol stream
    os.dup2(2, 1)
    _widen_pipe(protocol_fd)
    return protocol_fd


PIPE_BYTES = 1 << 20
"""Kernel buffer asked for a stdout pipe (Linux' unprivileged maximum by default)."""


def _widen_pipe(fd: int) -> None:
    """A 64 KiB pipe takes a 3 MB response (get_entries of 2,000 turns) in ~45 write/read rounds,
    each a wake-up of both processes; 1 MiB takes it in 3. Linux only; anything else keeps its size."""
    try:
        # in the try: fcntl and F_SETPIPE_SZ are Linux's
        import fcntl

        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)
    except (OSError, ImportError):  # not Linux, a limit lower than 1 MiB, or not a pipe
        pass


async def serve(opts: Options, collecting: bool | None) -> int:
    """Start the runtime and serve stdin until EOF. The caller paused the garbage collector for the
    start (``collecting``: whether it ran before; None: not paused, ``ATOMIC_PLAIN``); it runs again
    once started (``kit._fast.collector.start_done``)."""
    try:
        # the RPC server's parts: ACP imports this module (claim_stdout, run_to_exit) without them
        from atomic_host.frontends.rpc.handlers import Handlers
        from atomic_host.frontends.rpc.server import RpcServer
        from atomic_host.frontends.rpc.ui import RpcUI

        out = Output(fd=claim_stdout())
        ui = RpcUI(out, has_ui=opts.mode == "rpc")
        rt = Runtime(opts, out, ui)
        try:
            await rt.start()
        except Exception as exc:
            log.warning(f"failed to start: {type(exc).__name__}: {exc}")
            return 1
    finally:
        if collecting is not None:
            start_done(collecting)

    async def on_eof() -> None:
        ui.close()  # nobody is left to answer a dialog: an extension waiting on one goes on at once
        # Bash requests are owned by frontends/rpc/bash.py; if no command ever imported it, none
        # ran and there is nothing to cancel (the import would be the only work done here).
        bash = sys.modules.get("atomic_host.frontends.rpc.bash")
        if bash is not None:
            await bash.drain()
        await rt.shutdown()

    def warm() -> None:
        model = rt.session.model if rt.session is not None else None
        needs_http = model is not None and rt.models.needs_http(model["api"])
        threading.Thread(target=_prewarm, args=(rt.tools.for_model(), needs_http), daemon=True).start()

    def explain(message: str) -> str:
        # lazy: frontends.hints only when a failure is explained
        from atomic_host.frontends.hints import explain

        return explain(message, rt.models, opts, rpc=True)

    table = Handlers(rt).table()
    server = RpcServer(
        rt.out,
        table,
        on_eof,
        on_first_response=warm,
        explain=explain,
        concurrent=table.concurrent,
        write_barrier=rt.write_barrier,
    )
    rt.exit_request = server.request_shutdown
    try:
        return await server.serve()
    finally:
        out.flush()


EXIT_GRACE_S = 2.0
"""At exit, how long tasks left running get to finish after being cancelled."""


def run_until_done(main: Coroutine[Any, Any, int]) -> int:
    """``asyncio.run``, except that a task which ignores cancellation at exit (plugin code the host
    had to abandon: a tool or hook that swallows ``CancelledError``) cannot keep the process alive."""
    loop = asyncio.new_event_loop()
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(main)
    finally:
        try:
            left = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in left:
                task.cancel()
            if left:
                loop.run_until_complete(asyncio.wait(left, timeout=EXIT_GRACE_S))
                stuck = [t for t in left if not t.done()]
                if stuck:
                    log.warning(f"{len(stuck)} task(s) ignored cancellation at exit; leaving them")
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            asyncio.set_event_loop(None)
            loop.close()


def run_rpc(opts: Options, *, collecting: bool | None) -> int:
    """``atomic --mode rpc``; ``collecting`` as for :func:`serve`."""
    return run_to_exit(serve(opts, collecting))


def run_to_exit(main: Any) -> int:
    """Run a frontend's serve coroutine; after a signal (129/130/143) or with the client gone (141)
    leave at once, without waiting for threads a plugin may have left running."""
    code = run_until_done(main)
    flush_all()
    sys.stdout.flush()
    sys.stderr.flush()
    if code in (129, 130, 141, 143):
        host_exit(code)
    return code
