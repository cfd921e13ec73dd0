"""Queued messages survive a SIGKILL: a ``steer`` / ``follow_up`` acknowledged while a run
streamed is in the session's queue journal; after a restart with ``--continue`` nothing happens
until ``start_pending_recovery``, which delivers them in one turn (the model's request holds them
in delivery order: steering, then follow-ups) and says so (``replayed``) — once: a repeated call
repeats the report and sends nothing, and a later process finds nothing pending. Messages that
were delivered or cleared before the crash are not replayed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from rec_helpers import (
    MODEL,
    QUIET,
    answer,
    file_entries,
    journal,
    provider,
    session_files,
    sigkill,
    stalled,
    until,
    user_texts,
)

from atomic_host import testing_sse as sse
from atomic_host.testing import start_host

pytestmark = pytest.mark.slow  # hosts killed with SIGKILL and started again


async def _crash_with_queue(tmp_path: Path, server: sse.SSEServer, queue: list[tuple[str, str]]) -> None:
    """Turn 1 answers; turn 2 ("second") stalls at the model; ``queue`` is sent; SIGKILL."""
    server.enqueue(answer())
    server.enqueue(stalled())
    async with start_host(*MODEL, base=tmp_path, settings=QUIET) as host:
        c = host.client
        assert (await c.prompt_and_wait("first")).ok
        assert (await c.call("prompt", message="second"))["disposition"] == "started"
        await until(lambda: len(server.requests) == 2)
        for kind, text in queue:
            if kind == "clear_queue":
                await c.call("clear_queue")
            else:
                assert (await c.call(kind, message=text))["disposition"] == "queued"
        await sigkill(c)


async def _recover(tmp_path: Path, server: sse.SSEServer, replayed: int) -> list[str]:
    """Restart, check nothing runs by itself, recover; returns the user texts the model got."""
    before = len(server.requests)
    server.enqueue(answer())
    async with start_host("--continue", *MODEL, base=tmp_path, settings=QUIET) as host:
        c = host.client
        await asyncio.sleep(0.5)
        assert len(server.requests) == before  # loading the session replays nothing
        assert (await c.get_state())["pendingMessageCount"] == 0
        mark = len(c.events)
        report = await c.call("start_pending_recovery", reason="startup")
        assert report == {"replayed": replayed, "dropped": 0, "completions": 0, "notices": []}
        await c.wait_for_idle(after=mark)
        events = c.events[mark:]
        kinds = [e["type"] for e in events]
        assert kinds.count("agent_start") == 1 and kinds.count("turn_start") == 1
        assert kinds.index("agent_start") < kinds.index("turn_start") < kinds.index("agent_end")
        assert len(server.requests) == before + 1  # one turn, one model call
        delivered = [e["message"] for e in events if e["type"] == "message_end" and e["message"]["role"] == "user"]
        assert len(delivered) == replayed
        sent = user_texts(server.requests[-1].body)
        assert await c.call("start_pending_recovery") == report  # the same report ...
        await asyncio.sleep(0.3)
        assert len(server.requests) == before + 1  # ... and nothing sent again
        messages = (await c.get_messages()).messages
        assert {m["role"] for m in messages} == {"user", "assistant"}  # the journal is not a message
        host.assert_protocol_lines()
    async with start_host("--continue", *MODEL, base=tmp_path, settings=QUIET) as host:
        report = await host.client.call("start_pending_recovery")
        assert report == {"replayed": 0, "dropped": 0, "completions": 0, "notices": []}
        await asyncio.sleep(0.3)
        assert len(server.requests) == before + 1
    return sent


async def test_two_follow_ups_and_a_steer_are_replayed_in_one_turn_once(tmp_path: Path) -> None:
    with sse.SSEServer() as server:
        provider(tmp_path / "agent", server.base_url)
        queue = [("follow_up", "fu one"), ("follow_up", "fu two"), ("steer", "steer one")]
        await _crash_with_queue(tmp_path, server, queue)
        (path,) = session_files(tmp_path / "agent")
        records = journal(path)
        assert [(r["op"], r["kind"]) for r in records] == [("queued", "followUp")] * 2 + [("queued", "steer")]
        assert not [m for m in file_entries(path) if m.get("message", {}).get("content") == "fu one"]
        sent = await _recover(tmp_path, server, replayed=3)
        assert sent == ["first", "second", "steer one", "fu one", "fu two"]
        assert [r["op"] for r in journal(path)][3:] == ["settled"] * 3


async def test_delivered_messages_are_not_replayed_even_without_their_settle_record(tmp_path: Path) -> None:
    """The steer is delivered before the crash; the follow-up is not. The settle records are cut
    from the file (as if the process died between the two writes): the user message counts."""
    with sse.SSEServer() as server:
        provider(tmp_path / "agent", server.base_url)
        server.enqueue(answer())
        server.enqueue(answer(delay=1.0))
        server.enqueue(stalled())
        async with start_host(*MODEL, base=tmp_path, settings=QUIET) as host:
            c = host.client
            assert (await c.prompt_and_wait("first")).ok
            await c.call("prompt", message="second")
            assert (await c.call("steer", message="steer one"))["disposition"] == "queued"
            await until(lambda: len(server.requests) == 3)  # the steer went in with turn 3
            assert "steer one" in user_texts(server.requests[2].body)
            assert (await c.call("follow_up", message="fu one"))["disposition"] == "queued"
            await sigkill(c)
        (path,) = session_files(tmp_path / "agent")
        _cut_settle_records(path)
        sent = await _recover(tmp_path, server, replayed=1)
        assert sent == ["first", "second", "steer one", "fu one"]


def _cut_settle_records(path: Path) -> None:
    """Remove the settle records from a session file; their children hang from their parents."""
    header, *lines = path.read_text(encoding="utf-8").splitlines()
    entries = [json.loads(line) for line in lines]
    cut = {e["id"]: e["parentId"] for e in entries if e.get("type") == "custom" and e["data"].get("op") == "settled"}
    assert len(cut) == 1
    kept = [e for e in entries if e["id"] not in cut]
    for e in kept:
        if e["parentId"] in cut:
            e["parentId"] = cut[e["parentId"]]
    path.write_text("\n".join([header, *(json.dumps(e) for e in kept)]) + "\n", encoding="utf-8")


async def test_cleared_messages_are_not_replayed(tmp_path: Path) -> None:
    with sse.SSEServer() as server:
        provider(tmp_path / "agent", server.base_url)
        queue = [("follow_up", "gone a"), ("steer", "gone b"), ("clear_queue", ""), ("follow_up", "kept c")]
        await _crash_with_queue(tmp_path, server, queue)
        (path,) = session_files(tmp_path / "agent")
        settled = [r for r in journal(path) if r["op"] == "settled"]
        assert len(settled) == 1 and settled[0]["how"] == "cleared" and len(settled[0]["ids"]) == 2
        sent = await _recover(tmp_path, server, replayed=1)
        assert sent == ["first", "second", "kept c"]


async def test_a_clone_does_not_replay_what_was_queued_in_its_source(tmp_path: Path) -> None:
    """``clone`` copies the journal records on the branch into a new session: they are the
    source's to deliver, not the clone's. The source still replays them afterwards."""
    with sse.SSEServer() as server:
        provider(tmp_path / "agent", server.base_url)
        await _crash_with_queue(tmp_path, server, [("follow_up", "fu one")])
        (source,) = session_files(tmp_path / "agent")
        server.enqueue(answer())
        async with start_host("--continue", *MODEL, base=tmp_path, settings=QUIET) as host:
            c = host.client
            assert (await c.call("clone"))["cancelled"] is False
            state = await c.get_state()
            clone = Path(state["sessionLocation"])
            assert clone != source
            assert any(r["op"] == "queued" for r in journal(clone))  # copied along with the branch
            report = await c.call("start_pending_recovery")
            assert report["replayed"] == 0
            mark = len(c.events)
            await c.call("switch_session", sessionPath=str(source))
            report = await c.call("start_pending_recovery")
            assert report["replayed"] == 1
            await c.wait_for_idle(after=mark)
            assert user_texts(server.requests[-1].body) == ["first", "second", "fu one"]
