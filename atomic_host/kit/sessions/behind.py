"""Write-behind: a session's writes run in order on its store's write thread, off the event loop.

A store whose writes are network round trips (``postgres``: one statement per append, bounded by
``tcp_user_timeout`` on a dead link, ~10 s) gives its writer a ``write_thread`` (a one-worker
executor). :class:`~atomic_host.kit.sessions.tree.Session` then hands each write made on an event
loop to it and returns at once; the loop never waits for the database. A write made off any loop
(a script, a thread) waits for the writes before it and is made before the call returns, so to
such a caller a returned append is a durable one, as with the file stores. What the host acknowledges
to a client waits for the writes before it (:meth:`Session.settled`, the *flush barrier*): a
command's response, the ``message_end`` of a delivered user message, ``agent_end``. So an
acknowledged entry is durable as with the synchronous file stores, and ``abort`` still answers at
once (a barrier inside a run stops waiting when the run is aborted).

A failed write fails every write queued behind it (they are never sent: the store stays as it
was after the last good one) and is kept here until the session next looks (the barrier, or the
next append): the session then takes back every entry that was not stored and raises the error,
which reaches the client as ``Could not save the session: …``, as a failed synchronous write does.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, wait
from typing import Any

from atomic_host.kit.log import log


class Failure:
    """A failed write: the error, and what the session was before the write (its entry count,
    whether it was persisted)."""

    __slots__ = ("error", "keep", "persisted")

    def __init__(self, error: BaseException, keep: int, persisted: bool) -> None:
        self.error, self.keep, self.persisted = error, keep, persisted


class WriteBehind:
    """The writes of one session, run in submission order on ``executor`` (one worker)."""

    def __init__(self, executor: Executor, where: str) -> None:
        self._executor = executor
        self._where = where
        self._epoch = 0
        """Bumped when a failure is taken: writes queued before it (behind the failed one) never run."""
        self._last: Future[None] | None = None
        self._lock = threading.Lock()
        self.failure: Failure | None = None
        """Set by the write thread when a write fails; taken (:meth:`take_failure`) on the loop."""
        self.submitted = 0
        """How many writes were handed over (a command's mark: did it write anything?)."""

    def submit(self, write: Callable[[], Any], keep: int, persisted: bool) -> None:
        """Run ``write`` after every write submitted before it; ``keep``/``persisted``: the
        session's entry count and persisted flag to go back to when it fails."""
        epoch = self._epoch

        def job() -> None:
            with self._lock:
                if self._epoch != epoch or self.failure is not None:
                    return  # an earlier write failed: this one is never sent
            try:
                write()
            except BaseException as exc:
                with self._lock:
                    if self._epoch == epoch:
                        self.failure = Failure(exc, keep, persisted)
                log.warning(f"could not save the session {self._where}: {exc}")

        self._last = self._executor.submit(job)
        self.submitted += 1

    def drain(self) -> None:
        """Block until every write submitted so far has finished (a caller off the event loop)."""
        last = self._last
        if last is not None:
            wait([last])

    def submit_always(self, work: Callable[[], Any]) -> None:
        """Run ``work`` after every write submitted so far, even after a failure (closing)."""

        def job() -> None:
            try:
                work()
            except Exception as exc:
                log.warning(f"session {self._where}: {type(exc).__name__}: {exc}")

        self._last = self._executor.submit(job)

    async def wait(self, abort: asyncio.Event | None = None) -> None:
        """Until every write submitted so far has finished (or ``abort`` is set). Cancelling the
        caller leaves the writes queued."""
        last = self._last
        if last is None or last.done():
            return
        done = asyncio.wrap_future(last)
        if abort is None:
            await asyncio.wait({done})  # asyncio.wait never cancels what it waits for
            return
        if abort.is_set():
            return
        stopped = asyncio.ensure_future(abort.wait())
        try:
            await asyncio.wait({done, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()

    def take_failure(self) -> Failure | None:
        """The failure, if a write failed; taking it lets the writes that come after it run again
        (the ones queued behind the failed write are dropped)."""
        with self._lock:
            failure, self.failure = self.failure, None
            if failure is not None:
                self._epoch += 1
        return failure


def on_loop() -> bool:
    """True when an event loop runs on the calling thread: a write there goes behind; anywhere
    else (a script, a thread) it is made before the call returns, as a file store's."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


__all__ = ["Failure", "WriteBehind", "on_loop"]
