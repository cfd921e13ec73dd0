"""``atomic --mode rpc``: start the runtime and serve JSONL until stdin closes."""

from __future__ import annotations

import asyncio
import os
import sys
import threading

from atomic_host.core.options import Options


def _prewarm() -> None:
    """Import what later commands need (pydantic models, httpx) off the critical path."""
    try:
        import httpx  # noqa: F401

        import atomic_host.core.protocol.validate  # noqa: F401
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
    return protocol_fd


async def serve(opts: Options) -> int:
    from atomic_host.frontends.rpc.handlers import Handlers
    from atomic_host.frontends.rpc.io import Output
    from atomic_host.frontends.rpc.server import RpcServer
    from atomic_host.runtime import Runtime

    rt = Runtime(opts, out=Output(fd=claim_stdout()))
    try:
        await rt.start()
    except Exception as exc:
        print(f"atomic: failed to start: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1

    async def on_eof() -> None:
        from atomic_host.frontends.rpc.bash import drain

        await drain()
        await rt.shutdown()

    def warm() -> None:
        threading.Thread(target=_prewarm, daemon=True).start()

    server = RpcServer(rt.out, Handlers(rt).table(), on_eof, on_first_response=warm)
    return await server.serve()


def run_rpc(opts: Options) -> int:
    code = asyncio.run(serve(opts))
    sys.stdout.flush()
    sys.stderr.flush()
    if code in (129, 130, 143):
        os._exit(code)
    return code
