"""``SyncClient``: the client for scripts that do not use asyncio.

It runs an :class:`RpcClient` on an event loop in a background thread; every coroutine method of
the client is a plain blocking method here, and ``stream()`` is an ordinary generator."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from typing import Any

from atomic_host.client.options import AtomicOptions
from atomic_host.client.rpc import RpcClient
from atomic_host.client.types import Event


class SyncClient:
    """``with SyncClient(AtomicOptions(...)) as client: print(client.run("hi").text)``.

    Takes what :class:`RpcClient` takes. Every ``async`` method of the client (``run``, ``get_state``,
    ``set_model``, …) blocks until done; other attributes (``events``, ``failure``, ``session_id``)
    are the client's own. Callbacks (``can_use_tool``, ``on_ui_request``, ``on_event``) run on the
    client's thread. Ctrl-C while waiting cancels the call, which aborts a run in progress."""

    def __init__(self, options: AtomicOptions | list[str] | None = None, **kwargs: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="atomic-client", daemon=True)
        self._thread.start()
        self.client = RpcClient(options, **kwargs)
        try:
            self._call(self.client.start())
        except BaseException:
            self._stop_loop()
            raise

    def _call(self, coro: Coroutine[Any, Any, Any]) -> Any:
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()  # Ctrl-C (or anything else) while waiting: the call is cancelled too
            raise

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.client, name)
        if not asyncio.iscoroutinefunction(attr):
            return attr

        def blocking(*args: Any, **kwargs: Any) -> Any:
            return self._call(attr(*args, **kwargs))

        blocking.__name__ = name
        blocking.__doc__ = attr.__doc__
        return blocking

    def stream(self, message: str, **kwargs: Any) -> Iterator[Event]:
        """The run's typed events as they arrive (see :meth:`RpcClient.stream`); leaving the loop
        aborts the run."""

        async def open_stream() -> Any:
            return self.client.stream(message, **kwargs)

        agen = self._call(open_stream())
        try:
            while True:
                try:
                    event = self._call(agen.__anext__())
                except StopAsyncIteration:
                    return
                yield event
        finally:
            self._call(agen.aclose())

    def close(self) -> int | None:
        """Stop the host and the client's thread; returns the host's exit status."""
        try:
            return self._call(self.client.close())  # type: ignore[no-any-return]
        finally:
            self._stop_loop()

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
