"""``AbortSignal`` (kit/llm/abort.py): the run's abort event, watched by a provider stream
without a task of its own — still an :class:`asyncio.Event`, its watchers called on the loop soon
after it is set, and a stream waiting for its next event (or its response) ends as aborted."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest
from helpers import SilentServer

from atomic_host.contract.providers import StreamOptions
from atomic_host.kit.llm.abort import AbortSignal
from atomic_host.kit.llm.http import StreamAborted, sse_events
from atomic_host.kit.llm.http_client import new_http_client


async def test_it_is_an_event_whose_watchers_run_on_the_loop_once_it_is_set() -> None:
    signal = AbortSignal()
    calls: list[str] = []
    signal.on_set(lambda: calls.append("a"))
    stop_b = signal.on_set(lambda: calls.append("b"))
    stop_b()
    waiter = asyncio.ensure_future(signal.wait())
    await asyncio.sleep(0)
    assert not signal.is_set() and not waiter.done()
    signal.set()
    assert calls == []  # not from inside set(): on the loop, as a task's wake-up would be
    signal.set()  # already set: nothing more
    await asyncio.sleep(0)
    assert calls == ["a"]
    assert await waiter is True
    assert isinstance(signal, asyncio.Event) and signal.is_set()
    signal.on_set(lambda: calls.append("late"))  # set already: the watcher waits for the next set
    await asyncio.sleep(0)
    assert calls == ["a"]


@pytest.mark.parametrize("plain_event", [False, True])
async def test_a_stream_waiting_for_its_response_ends_aborted_when_the_signal_is_set(plain_event: bool) -> None:
    server = SilentServer()
    signal = asyncio.Event() if plain_event else AbortSignal()
    tasks_before = len(asyncio.all_tasks())
    seen_tasks: list[int] = []

    def abort() -> None:
        seen_tasks.append(len(asyncio.all_tasks()))
        signal.set()

    asyncio.get_running_loop().call_later(0.2, abort)
    start = time.monotonic()
    try:
        with pytest.raises(StreamAborted):
            url = f"http://127.0.0.1:{server.port}/v1"
            options = StreamOptions(http_client=new_http_client(), signal=signal)
            async with contextlib.aclosing(sse_events(url, {}, {"stream": True}, options)) as events:
                async for _ in events:
                    pass
    finally:
        server.close()
    assert time.monotonic() - start < 2
    # a plain event is watched by a task that waits on it; an AbortSignal by a callback
    assert seen_tasks == [tasks_before + (1 if plain_event else 0)]
    if not plain_event:
        assert signal._watchers == []  # type: ignore[attr-defined]  # the stream stopped watching
