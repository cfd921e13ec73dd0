"""``atomic --mode acp``: start the runtime and speak the Agent Client Protocol until stdin closes.

The engine is the same as in ``--mode rpc``; only the frontend differs. Its events go to an
:class:`Output` that writes nothing and hands each record to :meth:`AcpFrontend.on_event`; the
protocol fd carries only JSON-RPC messages (``claim_stdout``: plugin prints land on stderr).
Imported only for ``--mode acp``: the ACP SDK and the frontend load at its top.
"""

from __future__ import annotations

import asyncio
import signal

from acp.agent.connection import AgentSideConnection

from atomic_host.core.options import Options
from atomic_host.frontends.acp.frontend import AcpFrontend
from atomic_host.frontends.acp.transport import HostTransport
from atomic_host.frontends.acp.ui import AcpUI
from atomic_host.frontends.rpc.io import Output, open_stdin_lines, write_failure
from atomic_host.frontends.rpc.main import claim_stdout, run_to_exit
from atomic_host.kit.log import log
from atomic_host.runtime import Runtime


async def serve(opts: Options) -> int:
    protocol = Output(fd=claim_stdout())
    events = Output()
    events.closed = True  # engine events are translated by the listener, never written as such
    rt = Runtime(opts, out=events)  # the UI needs the frontend, which needs the runtime: set below
    frontend = AcpFrontend(rt)
    rt.ui = AcpUI(frontend)
    events.listeners.append(frontend.on_event)
    try:
        await rt.start()
    except Exception as exc:
        log.warning(f"failed to start: {type(exc).__name__}: {exc}")
        return 1
    transport = HostTransport(protocol, await open_stdin_lines())
    frontend.transport = transport
    conn = AgentSideConnection(frontend, transport, listening=False)
    frontend.install()

    stopped = asyncio.Event()
    exit_code = 0

    def terminate(code: int) -> None:
        nonlocal exit_code
        exit_code = code
        stopped.set()

    loop = asyncio.get_running_loop()

    def stdout_failed(exc: OSError) -> None:  # the editor is gone, or stdout takes nothing: leave
        code, line = write_failure(exc)
        log.warning(line)
        terminate(code)

    protocol.on_broken = lambda exc: loop.is_closed() or loop.call_soon_threadsafe(stdout_failed, exc)
    for sig, code in ((signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)):
        try:
            loop.add_signal_handler(sig, terminate, code)
        except (NotImplementedError, RuntimeError):
            pass
    listen = asyncio.create_task(conn.listen())
    stop = asyncio.create_task(stopped.wait())
    await asyncio.wait({listen, stop}, return_when=asyncio.FIRST_COMPLETED)
    if stopped.is_set():  # a signal: leave now, sessions are already durable
        listen.cancel()
        return exit_code
    stop.cancel()
    await rt.shutdown()  # stdin closed: stop the run, tell plugins, exit cleanly
    await frontend.updates.close()
    await conn.close()
    return 0


def run_acp(opts: Options) -> int:
    return run_to_exit(serve(opts))
