"""The stdout writer's holds: agent events and the prompt response share one ``write`` per loop
iteration, and a message's first content delta is written at once with everything held before it
(time to first token), in order."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import pytest

from atomic_host.frontends.rpc import io
from atomic_host.frontends.rpc.io import Output


@pytest.fixture(autouse=True)
def wide_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hold window is 0.5 ms of wall time (io.HOLD_S): a descheduled test (a loaded CI machine)
    saw its held records flushed as a long iteration's. These tests are about what is held and in
    which order, so their window is a minute; ``test_a_record_after_the_window_flushes_the_held``
    checks the window itself."""
    monkeypatch.setattr(io, "HOLD_S", 60.0)


@pytest.fixture
def piped() -> Iterator[tuple[Output, int]]:
    """An Output writing to a pipe, and the pipe's non-blocking read end (:func:`_available`)."""
    r, w = os.pipe()
    os.set_blocking(r, False)
    out = Output(fd=w)
    try:
        yield out, r
    finally:
        out.flush()
        os.close(w)
        os.close(r)


def _update(kind: str, **fields: object) -> dict[str, object]:
    return {"type": "message_update", "assistantMessageEvent": {"type": kind, **fields}}


def _available(fd: int) -> list[bytes]:
    """The lines written so far (without waiting)."""
    try:
        data = os.read(fd, 1 << 20)
    except BlockingIOError:
        return []
    return data.splitlines()


async def test_first_delta_is_written_at_once_with_the_held_records(piped: tuple[Output, int]) -> None:
    out, r = piped
    writes: list[int] = []
    real = out._write
    out._write = lambda pieces: (writes.append(len(pieces)), real(pieces))[1]  # type: ignore[method-assign]
    out.respond("prompt", "p1", {"disposition": "started"})
    out.send({"type": "agent_start"})
    out.send({"type": "message_start", "message": {"role": "assistant"}})
    out.send(_update("start"))
    out.send(_update("text_start", contentIndex=0))
    assert _available(r) == []  # all held: nothing was written yet
    out.send(_update("text_delta", contentIndex=0, delta="a"))
    lines = _available(r)
    assert [line.split(b'"')[3] for line in lines] == [
        b"p1",
        b"agent_start",
        b"message_start",
        *[b"message_update"] * 3,
    ]
    assert b'"delta":"a"' in lines[-1] and len(writes) == 1
    out.send(_update("text_delta", contentIndex=0, delta="b"))  # not the first delta: held
    out.send(_update("text_delta", contentIndex=0, delta="c"))
    assert _available(r) == []
    await asyncio.sleep(0)  # the iteration ends: one write for both
    assert [b'"delta":"b"' in x or b'"delta":"c"' in x for x in _available(r)] == [True, True]
    assert len(writes) == 2
    out.send({"type": "message_start", "message": {"role": "assistant"}})  # a new message: its first delta at once
    out.send(_update("thinking_delta", contentIndex=0, delta="t"))
    assert len(_available(r)) == 2 and len(writes) == 3


async def test_the_host_gives_way_once_per_message_after_its_first_delta_is_written(
    monkeypatch: pytest.MonkeyPatch, piped: tuple[Output, int]
) -> None:
    """After a message's first content delta the writer yields the cpu once (a client woken onto
    this cpu reads it before the host parses the rest of a burst), with the delta already in the
    pipe; later deltas of that message, and other records, do not yield."""
    out, r = piped
    seen_at_yield: list[list[bytes]] = []
    monkeypatch.setattr(io, "_sched_yield", lambda: seen_at_yield.append(_available(r)))
    out.respond("prompt", "p1", {"disposition": "started"})
    out.send({"type": "message_start", "message": {"role": "assistant"}})
    out.send(_update("text_start", contentIndex=0))
    assert seen_at_yield == []
    out.send(_update("text_delta", contentIndex=0, delta="a"))
    assert len(seen_at_yield) == 1 and b'"delta":"a"' in seen_at_yield[0][-1]
    for delta in "bcd":
        out.send(_update("text_delta", contentIndex=0, delta=delta))
    await asyncio.sleep(0)
    out.respond("get_state", "s1", {})
    assert len(seen_at_yield) == 1
    out.send({"type": "message_start", "message": {"role": "assistant"}})  # the next message yields again
    out.send(_update("toolcall_delta", contentIndex=0, delta="{"))
    assert len(seen_at_yield) == 2 and b"toolcall_delta" in seen_at_yield[1][-1]


async def test_other_responses_are_still_written_at_once(piped: tuple[Output, int]) -> None:
    out, r = piped
    out.respond("get_state", "s1", {"x": 1})
    assert len(_available(r)) == 1
    out.send({"type": "agent_start"})  # a second record in the iteration: held
    assert _available(r) == []
    await asyncio.sleep(0)
    assert _available(r) == [b'{"type":"agent_start"}']


def test_without_a_running_loop_every_record_is_written_at_once(piped: tuple[Output, int]) -> None:
    out, r = piped
    out.send({"type": "agent_start"})
    assert _available(r) == [b'{"type":"agent_start"}']


async def test_a_record_after_the_window_flushes_the_held(
    monkeypatch: pytest.MonkeyPatch, piped: tuple[Output, int]
) -> None:
    """A record that comes HOLD_S or more after the first held one (a long loop iteration) writes
    what is held, itself included, instead of holding it longer."""
    monkeypatch.setattr(io, "HOLD_S", 0.0)  # every later record comes "late"
    out, r = piped
    out.respond("prompt", "p1", {"disposition": "started"})  # held (the iteration's first)
    assert _available(r) == []
    out.send({"type": "agent_start"})  # late: the held response goes out, and a new hold begins
    assert [line.split(b'"')[3] for line in _available(r)] == [b"p1"]
    await asyncio.sleep(0)
    assert _available(r) == [b'{"type":"agent_start"}']
