"""Run a standard-library-only function of this package in a fresh Python process, killable on abort.

For work that a thread cannot stop: ``re`` holds the GIL for the whole of one match, so a
pattern that backtracks for minutes would freeze the host's event loop and ignore any
cancellation flag. The child is ``python -I -S`` (no site, no environment, no current
directory on ``sys.path``, so a project's ``re.py`` cannot shadow the standard library) with
``builtin_plugins`` and ``builtin_plugins.tools`` stubbed as bare namespace modules, so it pays
neither for the host's imports nor for the package ``__init__`` files (about 15 ms to start
instead of 65 ms). Request and result travel as JSON over its stdin and stdout.

Document conversion (``sources/documents``) needs third-party libraries: with ``site=True`` the
child gets the host's ``sys.path`` (still no ``site`` module, no environment), and ``limits``
caps its address space and CPU seconds (``resource.setrlimit``), so a decompression bomb or a
parser that loops ends in the child, not in the host.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from typing import Any

from atomic_host.contract.tools import ToolAborted, ToolContext, ToolError
from atomic_host.kit.tool_env import tool_environment

_BOOTSTRAP = """\
import importlib, json, sys, types
options = json.loads(sys.argv[5])
sys.path.extend(options.get("path", ()))
if options.get("memory") or options.get("cpu"):
    import resource
    if options.get("memory"):
        resource.setrlimit(resource.RLIMIT_AS, (options["memory"], options["memory"]))
    if options.get("cpu"):
        resource.setrlimit(resource.RLIMIT_CPU, (options["cpu"], options["cpu"] + 1))
for name, path in zip(("builtin_plugins", "builtin_plugins.tools"), sys.argv[1:3]):
    module = types.ModuleType(name)
    module.__path__ = [path]
    sys.modules[name] = module
function = getattr(importlib.import_module(sys.argv[3]), sys.argv[4])
result = function(json.loads(sys.stdin.buffer.read()))
sys.stdout.buffer.write(json.dumps(result).encode("ascii"))
"""


def worker_command(
    module: str, function: str, *, site: bool = False, memory: int | None = None, cpu: int | None = None
) -> list[str]:
    """argv that runs ``module.function(request)`` (``module`` inside ``builtin_plugins.tools``);
    ``site``: with the host's ``sys.path``; ``memory`` (bytes) and ``cpu`` (seconds): rlimits."""
    import builtin_plugins
    import builtin_plugins.tools

    # not the working directory: a project's own ``docx.py`` must not stand in for python-docx
    here = os.getcwd()
    options: dict[str, Any] = {"path": [p for p in sys.path if p and p != here] if site else []}
    if memory:
        options["memory"] = memory
    if cpu:
        options["cpu"] = cpu

    return [
        sys.executable,
        "-I",
        "-S",
        "-c",
        _BOOTSTRAP,
        builtin_plugins.__path__[0],
        builtin_plugins.tools.__path__[0],
        module,
        function,
        json.dumps(options),
    ]


async def run_in_worker(
    ctx: ToolContext,
    module: str,
    function: str,
    request: dict[str, Any],
    *,
    label: str,
    timeout: float | None = None,
    site: bool = False,
    memory: int | None = None,
) -> Any:
    """``module.function(request)`` in a child process; SIGKILL and ``ToolAborted`` on abort,
    SIGKILL and ``ToolError`` after ``timeout`` seconds.

    The function must take and return JSON-able values, and import only the standard library and
    standard-library-only modules of ``builtin_plugins.tools`` (with ``site``: installed packages
    too). ``memory`` caps the child's address space in bytes; ``timeout`` also caps its CPU time.
    """
    if ctx.signal.is_set():
        raise ToolAborted(f"{label} aborted")
    cpu = int(timeout) + 1 if timeout else None
    proc = await asyncio.create_subprocess_exec(
        *worker_command(module, function, site=site, memory=memory, cpu=cpu),
        env=tool_environment(),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    talk = asyncio.ensure_future(proc.communicate(json.dumps(request).encode("ascii")))
    abort_wait = asyncio.ensure_future(ctx.signal.wait())
    try:
        await asyncio.wait({talk, abort_wait}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if not talk.done():
            if abort_wait.done():
                raise ToolAborted(f"{label} aborted")
            raise ToolError(f"{label} took longer than {timeout:g} s; stopped")
        out, err = talk.result()
    finally:
        abort_wait.cancel()
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            talk.cancel()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(proc.wait(), 5)
    if proc.returncode != 0:
        lines = err.decode("utf-8", "replace").strip().splitlines()
        if proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL) and cpu:
            raise ToolError(f"{label} took longer than {cpu} s of CPU; stopped")
        if lines and lines[-1].startswith("MemoryError") and memory:
            raise ToolError(f"{label} needed more than {memory // (1024 * 1024)} MiB of memory; stopped")
        raise ToolError(f"{label} failed: {lines[-1] if lines else f'worker exited with {proc.returncode}'}")
    return json.loads(out)
