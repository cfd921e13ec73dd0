"""``AbortSignal``: the run's abort event, which a provider stream can watch without a task.

A stream races every wait for its next event against the abort signal (``kit/llm/http.py``).
Watching a plain :class:`asyncio.Event` takes a task that waits on it: created, run once and
cancelled again for every model request (three event-loop steps, ~30 µs of a prompt's path to
its first delta on a loaded machine, issue 12). An :class:`AbortSignal` is that same event, and
calls what watches it (on the loop, as the task's wake-up would) when it is set.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["AbortSignal"]


class AbortSignal(asyncio.Event):
    """An :class:`asyncio.Event` whose watchers (:meth:`on_set`) are called soon after it is set."""

    def __init__(self) -> None:
        super().__init__()
        self._watchers: list[tuple[asyncio.AbstractEventLoop, Callable[[], None]]] = []

    def set(self) -> None:
        if self.is_set():
            return
        super().set()
        for loop, callback in list(self._watchers):
            loop.call_soon(callback)

    def on_set(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` on the running loop soon after the signal is set (not if it already
        is); returns the function that stops watching."""
        entry = (asyncio.get_running_loop(), callback)
        self._watchers.append(entry)

        def stop() -> None:
            if entry in self._watchers:
                self._watchers.remove(entry)

        return stop
