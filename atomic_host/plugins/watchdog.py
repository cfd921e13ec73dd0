"""The loop watchdog: names the plugin whose code blocks the event loop.

A hook, tool or command that calls ``time.sleep`` or does long CPU work on the event loop stalls
everything: streaming, ``get_state``, even ``abort``. The host cannot interrupt such code, but it
can say who did it. The loop schedules a heartbeat every ``interval`` seconds; a daemon thread
checks it, and when the heartbeat is older than ``stall_s`` it reads the main thread's stack
(``sys._current_frames``) and reports the innermost frame that belongs to a plugin module, on
stderr. Time the watchdog thread itself was kept from running (the process was starved of CPU or
stopped) is left out of the stall. The cost is per unit of time (a few callbacks a second), never per event.
"""

from __future__ import annotations

import _thread
import asyncio
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from types import FrameType

DEFAULT_STALL_MS = 1000
STARVED_S = 0.05
"""The watchdog thread waking later than this means the process was not running."""


class LoopWatchdog:
    """Watches one event loop from a daemon thread; ``start`` on the loop, ``stop`` at shutdown."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        stall_s: float,
        owners: Callable[[], dict[str, str]],
        report: Callable[[str], None] | None = None,
    ) -> None:
        self.loop = loop
        self.stall_s = stall_s
        self.interval = min(0.25, stall_s / 4)
        self.owners = owners
        self.report = report or (lambda line: print(line, file=sys.stderr, flush=True))
        self.loop_thread = threading.get_ident()
        self.last_beat = time.monotonic()
        self.stalls = 0
        """How many stalls were reported (tests and diagnostics)."""
        self._stop = threading.Event()
        self._handle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        """Call on the loop's thread."""
        self.loop_thread = threading.get_ident()
        self._beat()
        # A bare thread (daemonic, like every ``_thread`` thread): ``threading.Thread.start`` waits
        # until the new thread has run, which on a loaded 2-core machine held the first get_state
        # for milliseconds; the watchdog has nothing to say before its first interval anyway.
        _thread.start_new_thread(self._watch, ())

    def stop(self) -> None:
        self._stop.set()
        if self._handle is not None:
            self._handle.cancel()

    def _beat(self) -> None:
        self.last_beat = time.monotonic()
        if not self._stop.is_set():
            self._handle = self.loop.call_later(self.interval, self._beat)

    def _watch(self) -> None:
        reported_beat: float | None = None
        last_wake = time.monotonic()
        # (wake-up time, how late this thread woke): time the whole process was not scheduled
        # (a loaded machine, SIGSTOP, a suspended VM) is not the loop's fault.
        starved: deque[tuple[float, float]] = deque()
        while not self._stop.wait(self.interval):
            now = time.monotonic()
            late, last_wake = now - last_wake - self.interval, now
            if late > STARVED_S:
                starved.append((now, late))
            beat = self.last_beat
            while starved and starved[0][0] <= beat:
                starved.popleft()
            stalled = now - beat - sum(late for _, late in starved)
            if stalled > self.stall_s and reported_beat != beat:
                reported_beat = beat
                self.stalls += 1
                self.report(self._describe(stalled))
            elif reported_beat is not None and reported_beat != beat:
                # The loop ran again: say how long the stall lasted.
                self.report(f"atomic: event loop running again after a stall of {beat - reported_beat:.2f} s")
                reported_beat = None

    def _describe(self, stalled: float) -> str:
        frame = sys._current_frames().get(self.loop_thread)
        head = f"atomic: event loop blocked for {stalled:.2f} s"
        if frame is None:
            return head
        found = plugin_frame(frame, self.owners())
        if found is not None:
            path, where = found
            return f"{head} by plugin {path} ({where}); plugin code must not block: use async I/O or a thread"
        return f"{head} in host code ({_where(frame)})"


def plugin_frame(frame: FrameType | None, owners: dict[str, str]) -> tuple[str, str] | None:
    """The innermost frame of ``frame``'s stack that runs plugin code: (extensionPath, location)."""
    while frame is not None:
        module = frame.f_globals.get("__name__")
        if isinstance(module, str):
            path = _owner(module, owners)
            if path is not None:
                return path, _where(frame)
        frame = frame.f_back
    return None


def _owner(module: str, owners: dict[str, str]) -> str | None:
    path = owners.get(module)
    if path is not None:
        return path
    # A module inside a plugin package (``builtin_plugins.tools.bash`` under ``builtin_plugins.tools``).
    parts = module.split(".")
    for i in range(len(parts) - 1, 0, -1):
        path = owners.get(".".join(parts[:i]))
        if path is not None:
            return path
    return None


def _where(frame: FrameType) -> str:
    code = frame.f_code
    return f"{code.co_name} at {code.co_filename}:{frame.f_lineno}"


def start_watchdog(stall_ms: int, owners: Callable[[], dict[str, str]]) -> LoopWatchdog | None:
    """Start watching the running loop; None when disabled (``stall_ms`` <= 0)."""
    if stall_ms <= 0:
        return None
    watchdog = LoopWatchdog(asyncio.get_running_loop(), stall_ms / 1000, owners)
    watchdog.start()
    return watchdog
