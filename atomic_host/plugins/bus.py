"""The event bus between extensions (``api.events``): ``emit(channel, data)`` calls every listener of
``channel`` that plugins subscribed with ``on(channel, handler)``.

A listener is plugin code: whatever it raises (``sys.exit()`` included; faults.py) is its plugin's
error, reported as ``extension_error`` with ``event: "events:<channel>"``, and the other listeners
still run. An ``async def`` listener runs as a task of its own; ``emit`` does not wait for it.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from atomic_host.plugins.faults import contained, debug_traceback, fault_report, original

if TYPE_CHECKING:
    from atomic_host.plugins.manager import PluginHost


class _Listener:
    __slots__ = ("channel", "handler", "plugin")

    def __init__(self, channel: str, handler: Callable[[Any], Any], plugin: str) -> None:
        self.channel, self.handler, self.plugin = channel, handler, plugin


class EventBus:
    """Named channels; listeners in subscription order."""

    def __init__(self, plugins: PluginHost) -> None:
        self._plugins = plugins
        self._listeners: dict[str, list[_Listener]] = {}
        self._tasks: set[asyncio.Future[Any]] = set()

    def on(self, channel: str, handler: Callable[[Any], Any], plugin: str) -> Callable[[], None]:
        """Subscribe ``handler`` (owned by ``plugin``) to ``channel``; returns the unsubscribe function."""
        if not isinstance(channel, str) or not channel:
            raise ValueError("an event channel is a non-empty string")
        if not callable(handler):
            raise TypeError(f"an event listener must be callable, not {type(handler).__name__}")
        listener = _Listener(channel, handler, plugin)
        self._listeners.setdefault(channel, []).append(listener)

        def off() -> None:
            listeners = self._listeners.get(channel, [])
            if listener in listeners:
                listeners.remove(listener)

        return off

    def emit(self, channel: str, data: Any = None) -> None:
        """Call every listener of ``channel`` with ``data``, each on its own."""
        for listener in list(self._listeners.get(channel, ())):
            try:
                result = listener.handler(data)
                if inspect.isawaitable(result):
                    task = asyncio.ensure_future(contained(result))
                    self._tasks.add(task)
                    task.add_done_callback(lambda t, lis=listener: self._settled(t, lis))
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # sys.exit() in plugin code is the plugin's error (faults.py)
                self._report(listener, exc)

    def remove_plugin(self, plugin: str) -> None:
        """Drop ``plugin``'s listeners (it is unloaded or reloaded)."""
        for channel, listeners in self._listeners.items():
            self._listeners[channel] = [lis for lis in listeners if lis.plugin != plugin]

    def _settled(self, task: asyncio.Future[Any], listener: _Listener) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self._report(listener, original(task.exception()))  # type: ignore[arg-type]

    def _report(self, listener: _Listener, exc: BaseException) -> None:
        record = self._plugins.records.get(listener.plugin)
        why = fault_report(exc, self._plugins.roots(record))
        debug_traceback(exc)
        self._plugins.on_error(record.path if record else listener.plugin, f"events:{listener.channel}", why)
