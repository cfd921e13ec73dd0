"""Run a shell command with streamed, sanitised, bounded output.

Used by the RPC ``bash`` command and by the ``bash`` tool. The command runs as
``<shell> -c <command>`` in its own session (process group), so cancelling or timing out can
kill everything it started. stdout and stderr are separate pipes read as they become ready
(64 KiB per read, no per-line splitting); the interleaved text keeps arrival order. Only a
bounded tail is kept in memory; once more than 50 KiB has streamed, the full output goes to an
owner-only log file in the session temp tree (capped at 64 MiB). The command's environment is the
host's without its credentials (:mod:`atomic_host.kit.tool_env`).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import re
import signal as _signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

from atomic_host.kit import secrets
from atomic_host.kit.tempdirs import new_private_file, session_temp_dir
from atomic_host.kit.tool_env import tool_environment
from atomic_host.kit.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, Truncation, truncate_tail

__all__ = ["OutputTail", "ShellResult", "run_shell", "terminate_group"]

READ_SIZE = 1024 * 1024
PIPE_SIZE = 1024 * 1024
"""Asked-for pipe capacity (Linux F_SETPIPE_SZ): fewer, bigger reads and deltas for chatty commands."""
FULL_OUTPUT_CAP = 64 * 1024 * 1024
KILL_GRACE_SECONDS = 1.0

# CSI, OSC (BEL or ST terminated), DCS/SOS/PM/APC strings, and two-byte escapes. Bytes-level:
# escape sequences are ASCII, so this never touches UTF-8 multi-byte sequences.
_ANSI = re.compile(
    rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\"
    rb"|[ -/]*[0-OQ-WYZ\\`-~])"
)
_ESC_HOLD_MAX = 512
_CONTROL = bytes(c for c in range(32) if c not in (9, 10)) + b"\x7f"


class Sanitizer:
    """Incremental bytes → text: ANSI stripped, ``\\r`` and control bytes dropped, bad UTF-8 replaced."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = b""

    def feed(self, data: bytes, final: bool = False) -> str:
        if self._pending:
            data = self._pending + data
            self._pending = b""
        if b"\x1b" in data:
            if not final:
                # Hold back an escape sequence split across reads.
                esc = data.rfind(b"\x1b")
                if len(data) - esc < _ESC_HOLD_MAX:
                    m = _ANSI.match(data, esc)
                    if m is None:
                        data, self._pending = data[:esc], data[esc:]
            data = _ANSI.sub(b"", data)
        data = data.translate(None, _CONTROL)
        return self._decoder.decode(data, final)


class OutputTail:
    """Interleaved output with a bounded in-memory tail, line/byte counters and an optional log file."""

    def __init__(
        self,
        temp_dir: Callable[[], Path | str | None] | None = None,
        *,
        max_lines: int = DEFAULT_MAX_LINES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        file_cap: int = FULL_OUTPUT_CAP,
    ) -> None:
        self._temp_dir = temp_dir
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self._keep = max_bytes * 2 + 1024  # chars; ≥ max_bytes bytes, so the tail cut stays exact
        self._chunks: list[str] = []
        self._chars = 0
        self.total_bytes = 0
        self.newlines = 0
        self._ends_with_newline = True
        self.full_output_path: str | None = None
        self._fd: int | None = None
        self._file_bytes = 0
        self._file_cap = file_cap
        self._file_refused = temp_dir is None
        self.trimmed = False

    def append(self, text: str) -> None:
        if not text:
            return
        raw = text.encode("utf-8", "surrogatepass")
        self.total_bytes += len(raw)
        self.newlines += text.count("\n")
        self._ends_with_newline = text.endswith("\n")
        self._chunks.append(text)
        self._chars += len(text)
        if self._fd is not None:
            self._write(raw)
        elif self.total_bytes > self.max_bytes and not self._file_refused:
            self._open_file()
        if self._chars > 2 * self._keep and (self._fd is not None or self._file_refused):
            self._trim()

    @property
    def total_lines(self) -> int:
        if self.total_bytes == 0:
            return 0
        return self.newlines + (0 if self._ends_with_newline else 1)

    def _trim(self) -> None:
        joined = "".join(self._chunks)
        self._chunks = [joined[-self._keep :]]
        self._chars = len(self._chunks[0])
        self.trimmed = True

    def _open_file(self) -> None:
        directory = self._temp_dir() if self._temp_dir else None
        created = new_private_file(Path(directory), "atomic-bash-", ".log") if directory else None
        if created is None:
            self._file_refused = True
            return
        path, self._fd = created
        self.full_output_path = str(path)
        # Nothing has been trimmed yet (trimming waits for the file), so this is everything.
        self._write("".join(self._chunks).encode("utf-8", "surrogatepass"))

    def _write(self, raw: bytes) -> None:
        assert self._fd is not None
        room = self._file_cap - self._file_bytes
        if room <= 0:
            return
        chunk = raw[:room]
        try:
            os.write(self._fd, chunk)
        except OSError:
            return
        self._file_bytes += len(chunk)

    def snapshot(self) -> Truncation:
        """Tail-truncated view of everything so far, with line numbers over the whole output."""
        text = "".join(self._chunks)
        self._chunks = [text] if text else []
        total = self.total_lines
        if total <= self.max_lines and self.total_bytes <= self.max_bytes:
            return Truncation(text, False, total, self.total_bytes, 1, total)
        tr = truncate_tail(text, self.max_lines, self.max_bytes)
        kept = tr.last_line - tr.first_line + 1
        tr.total_lines = total
        tr.total_bytes = self.total_bytes
        tr.first_line, tr.last_line = total - kept + 1, total
        tr.truncated = True
        return tr

    def finish(self) -> Truncation:
        """Final view; makes sure a truncated output has its full copy on disk, then closes it."""
        tr = self.snapshot()
        if tr.truncated and self._fd is None and not self._file_refused:
            self._open_file()
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
        return tr


@dataclass
class ShellResult:
    """Outcome of :func:`run_shell`. ``exit_code`` is None when cancelled or timed out."""

    output: str
    exit_code: int | None
    cancelled: bool
    timed_out: bool
    truncated: bool
    full_output_path: str | None
    truncation: Truncation | None = None

    def to_wire(self) -> dict[str, object]:
        """The RPC ``bash`` response ``data`` (no ``exitCode`` when cancelled)."""
        data: dict[str, object] = {"output": self.output}
        if self.exit_code is not None:
            data["exitCode"] = self.exit_code
        data["cancelled"] = self.cancelled
        data["truncated"] = self.truncated
        if self.full_output_path:
            data["fullOutputPath"] = self.full_output_path
        return data


def kill_process_group(pgid: int) -> None:
    """Send SIGKILL to a whole process group, ignoring a group that is already gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, _signal.SIGKILL)


def group_alive(pgid: int) -> bool:
    """Whether any live (non-zombie) process is left in the group.

    Orphaned zombies count as dead: some container inits never reap them, and they hold no
    pipes and use no CPU.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return True
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


async def terminate_group(proc: subprocess.Popen[bytes], grace: float = KILL_GRACE_SECONDS) -> None:
    """SIGTERM the process group, then SIGKILL whatever is left after ``grace`` seconds."""
    pgid = proc.pid
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, _signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        proc.poll()  # reap the leader so it does not keep the group alive as a zombie
        if not group_alive(pgid):
            return
        await asyncio.sleep(0.02)
    kill_process_group(pgid)
    for _ in range(100):
        proc.poll()
        if not group_alive(pgid):
            return
        await asyncio.sleep(0.01)


def _grow_pipe(fd: int) -> None:
    """Best effort: a bigger pipe buffer (Linux only; the limit is /proc/sys/fs/pipe-max-size)."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", 1031) if fcntl is not None else None
    if set_size is None or not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, set_size, PIPE_SIZE)


async def _wait_exit(proc: subprocess.Popen[bytes]) -> int:
    """Wait for the leader to exit without blocking the loop (pidfd when available)."""
    loop = asyncio.get_running_loop()
    pidfd = -1
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        pidfd = -1
    try:
        if pidfd >= 0:
            done = loop.create_future()
            loop.add_reader(pidfd, lambda: done.done() or done.set_result(None))
            try:
                if proc.poll() is None:
                    await done
            finally:
                loop.remove_reader(pidfd)
            while proc.poll() is None:  # readable means exited; reaping is immediate
                await asyncio.sleep(0.001)
        else:
            while proc.poll() is None:
                await asyncio.sleep(0.02)
    finally:
        if pidfd >= 0:
            os.close(pidfd)
    return proc.returncode


class ShellOutput:
    """The output side of a shell command, per channel (stdout, stderr): bytes are decoded and
    cleaned (:class:`Sanitizer`), known credentials masked at the source — a key split across two
    chunks is held back until it is whole — then kept in the bounded tail with the full-output log
    (:class:`OutputTail`) and handed to ``on_chunk(channel, text)``. Shared by :func:`run_shell`
    and runners that bring their own process (``user_bash`` operations)."""

    def __init__(
        self, temp_dir: Callable[[], Path | str | None], on_chunk: Callable[[str, str], None] | None = None
    ) -> None:
        self.tail = OutputTail(temp_dir)
        self.on_chunk = on_chunk
        self._streams = {channel: (Sanitizer(), secrets.stream()) for channel in ("stdout", "stderr")}
        self._ended: set[str] = set()

    def feed(self, channel: str, data: bytes) -> None:
        sanitizer, masker = self._streams[channel]
        self._deliver(channel, masker.feed(sanitizer.feed(data)))

    def end(self, channel: str) -> None:
        """The channel reached its end (EOF): release what the cleaner and the masker held back."""
        if channel in self._ended:
            return
        self._ended.add(channel)
        sanitizer, masker = self._streams[channel]
        self._deliver(channel, masker.feed(sanitizer.feed(b"", final=True)) + masker.flush())

    def result(self, exit_code: int | None, *, cancelled: bool, timed_out: bool) -> ShellResult:
        """Finish: a channel closed before its end (abort, timeout, background children holding the
        pipe) releases only the masker's held-back text; then the tail becomes the result."""
        for channel, (_sanitizer, masker) in self._streams.items():
            if channel not in self._ended:
                self._deliver(channel, masker.flush())
        tr = self.tail.finish()
        return ShellResult(
            output=tr.content,
            exit_code=exit_code,
            cancelled=cancelled,
            timed_out=timed_out,
            truncated=tr.truncated,
            full_output_path=self.tail.full_output_path,
            truncation=tr,
        )

    def _deliver(self, channel: str, text: str) -> None:
        if text:
            self.tail.append(text)
            if self.on_chunk is not None:
                try:
                    self.on_chunk(channel, text)
                except Exception:
                    pass  # a broken listener must not stop the command


async def run_shell(
    command: str,
    cwd: str,
    *,
    on_chunk: Callable[[str, str], None] | None = None,
    signal: asyncio.Event | None = None,
    timeout: float | None = None,
    session_id: str,
    shell: str = "bash",
    env: dict[str, str] | None = None,
    keep_env: Iterable[str] = (),
    temp_dir: Callable[[], Path | str | None] | None = None,
    kill_grace: float = KILL_GRACE_SECONDS,
) -> ShellResult:
    """Run ``command`` with ``shell -c`` in ``cwd``; see the module docstring.

    ``on_chunk(channel, delta)`` gets each decoded, sanitised piece as it is read. The command sees
    ``os.environ`` without the host's credentials, except the variables ``keep_env`` names (the
    ``shellEnv.passThrough`` setting), with ``env`` over it (``tool_env.tool_environment``).
    ``temp_dir`` overrides where the full-output log goes (default:
    :func:`session_temp_dir` of ``session_id``). Never raises for the command's own failures;
    a missing shell or cwd raises ``OSError``.
    """
    out = ShellOutput(temp_dir or (lambda: session_temp_dir(session_id)), on_chunk)
    proc = subprocess.Popen(
        [shell, "-c", command],
        cwd=cwd,
        env=tool_environment(env, keep=keep_env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        close_fds=True,
    )
    loop = asyncio.get_running_loop()
    eof: dict[str, asyncio.Future[None]] = {}

    def reader(channel: str, fd: int, fut: asyncio.Future[None]) -> Callable[[], None]:
        def on_ready() -> None:
            try:
                data = os.read(fd, READ_SIZE)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if data:
                out.feed(channel, data)
            else:
                out.end(channel)
                loop.remove_reader(fd)
                if not fut.done():
                    fut.set_result(None)

        return on_ready

    pipes = {"stdout": proc.stdout, "stderr": proc.stderr}
    for channel, pipe in pipes.items():
        assert pipe is not None
        fd = pipe.fileno()
        os.set_blocking(fd, False)
        _grow_pipe(fd)
        eof[channel] = loop.create_future()
        loop.add_reader(fd, reader(channel, fd, eof[channel]))

    cancelled = timed_out = False
    exit_task = asyncio.ensure_future(_wait_exit(proc))
    abort_task = asyncio.ensure_future(signal.wait()) if signal is not None else None
    try:
        waiters: set[asyncio.Future[object]] = {exit_task}  # type: ignore[arg-type]
        if abort_task is not None:
            waiters.add(abort_task)  # type: ignore[arg-type]
        done, _ = await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if exit_task not in done:
            cancelled = abort_task is not None and abort_task in done
            timed_out = not cancelled
            await terminate_group(proc, kill_grace)
        # Drain what is still in the pipes. Children left running in the background may hold
        # them open forever, so wait for EOF only briefly when the group still has members.
        limit = 0.3 if group_alive(proc.pid) else 2.0
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.gather(*eof.values()), limit)
    except BaseException:
        kill_process_group(proc.pid)
        raise
    finally:
        for task in (exit_task, abort_task):
            if task is not None and not task.done():
                task.cancel()
        for pipe in pipes.values():
            assert pipe is not None
            with contextlib.suppress(Exception):
                loop.remove_reader(pipe.fileno())
            pipe.close()
        proc.poll()
    exit_code = None if (cancelled or timed_out) else proc.returncode
    return out.result(exit_code, cancelled=cancelled, timed_out=timed_out)
