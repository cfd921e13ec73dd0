"""Background processes started by ``bash`` with ``background: true`` and stopped by ``kill``.

They live in ``ctx.state["background"]`` (host lifetime), each in its own process group with
output going to an owner-only log file, so ``kill`` can stop everything one started.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from atomic_host.kit.shell import terminate_group
from atomic_host.kit.tempdirs import new_private_file

STATE_KEY = "background"


@dataclass
class BackgroundProcess:
    id: str
    command: str
    cwd: str
    proc: subprocess.Popen[bytes]
    log_path: str
    started: float = field(default_factory=time.time)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def status(self) -> str:
        code = self.proc.poll()
        return "running" if code is None else f"exited with code {code}"

    def describe(self) -> str:
        age = int(time.time() - self.started)
        return f"{self.id} pid={self.pid} {self.status()} ({age}s) log={self.log_path} :: {self.command}"


@dataclass
class Registry:
    procs: dict[str, BackgroundProcess] = field(default_factory=dict)
    counter: int = 0


def registry(state: dict[str, Any]) -> Registry:
    reg = state.get(STATE_KEY)
    if not isinstance(reg, Registry):
        reg = state[STATE_KEY] = Registry()
        # The host awaits ``state["cleanup"]()`` when it shuts down.
        state["cleanup"] = lambda: stop_all(state)
    return reg


def start(
    state: dict[str, Any],
    command: str,
    cwd: str,
    log_dir: Path,
    *,
    shell: str = "bash",
    env: dict[str, str],
) -> BackgroundProcess:
    """Start ``command`` detached from our pipes, with exactly ``env`` as its environment;
    stdout+stderr go to ``<log_dir>/atomic-bg-<id>-….log``."""
    reg = registry(state)
    reg.counter += 1
    bg_id = f"bg-{reg.counter}"
    created = new_private_file(log_dir, f"atomic-{bg_id}-", ".log")
    if created is None:
        raise OSError("cannot create a log file in the session temp directory")
    log_path, fd = created
    try:
        proc = subprocess.Popen(
            [shell, "-c", command],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=fd,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(fd)
    bp = BackgroundProcess(bg_id, command, cwd, proc, str(log_path))
    reg.procs[bg_id] = bp
    return bp


async def stop(bp: BackgroundProcess, grace: float = 2.0) -> None:
    """Stop the process group (SIGTERM, then SIGKILL after ``grace`` s)."""
    await terminate_group(bp.proc, grace)
    bp.proc.poll()


async def stop_all(state: dict[str, Any]) -> None:
    """Stop every background process (host shutdown)."""
    for bp in list(registry(state).procs.values()):
        await stop(bp, grace=0.5)
