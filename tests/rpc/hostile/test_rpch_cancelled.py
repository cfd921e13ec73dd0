"""Found by the field fuzz: ``abort_compaction`` right behind ``compact`` cancelled the compaction
job before its first step; the CancelledError escaped the handler and ended the ordinary lane, so
every later command went unanswered. Both halves, in process and deterministic."""

from __future__ import annotations

import asyncio
from typing import Any

from atomic_host.engine.compaction import Job, _joined
from atomic_host.frontends.rpc.server import RpcServer


class _Out:
    def __init__(self) -> None:
        self.records: list[tuple[str, Any, bool, str | None]] = []

    def respond(self, command: str, req_id: Any = None, data: Any = None, *, has_data: bool = True) -> None:
        self.records.append((command, req_id, True, None))

    def error(self, command: str, req_id: Any, message: str, **_extra: Any) -> None:
        self.records.append((command, req_id, False, message))


async def test_a_handler_whose_awaited_job_is_cancelled_fails_and_the_lane_goes_on() -> None:
    async def cancelled_job(_cmd: dict[str, Any]) -> Any:
        job = asyncio.get_running_loop().create_future()
        job.cancel()
        return await job

    async def fine(_cmd: dict[str, Any]) -> Any:
        return {"ok": True}

    out = _Out()
    server = RpcServer(out, {"compact": cancelled_job, "get_state": fine}, on_eof=lambda: asyncio.sleep(0))  # type: ignore[arg-type]
    lane = asyncio.create_task(server._ordinary_lane())
    for i, ctype in enumerate(["compact", "get_state", "compact", "get_state"]):
        server.ordinary.put_nowait({"type": ctype, "id": i})
    server.ordinary.put_nowait(None)
    await asyncio.wait_for(lane, 5)
    assert out.records == [
        ("compact", 0, False, "Command cancelled"),
        ("get_state", 1, True, None),
        ("compact", 2, False, "Command cancelled"),
        ("get_state", 3, True, None),
    ]


async def test_a_lane_being_stopped_still_says_the_host_is_leaving() -> None:
    started = asyncio.Event()

    async def slow(_cmd: dict[str, Any]) -> Any:
        started.set()
        await asyncio.sleep(60)

    out = _Out()
    server = RpcServer(out, {"compact": slow}, on_eof=lambda: asyncio.sleep(0))  # type: ignore[arg-type]
    lane = asyncio.create_task(server._ordinary_lane())
    server.ordinary.put_nowait({"type": "compact", "id": "x"})
    await started.wait()
    lane.cancel()
    await asyncio.gather(lane, return_exceptions=True)
    assert out.records == [("compact", "x", False, "Command cancelled: the host is shutting down")]


async def test_a_compaction_cancelled_before_its_first_step_is_an_aborted_outcome() -> None:
    async def never_started() -> None:
        raise AssertionError("cancelled before its first step: this never runs")

    task = asyncio.create_task(never_started())
    task.cancel()
    outcome = await _joined(Job("manual", task))  # type: ignore[arg-type]
    assert outcome.aborted is True and outcome.result is None and outcome.reason == "manual"
