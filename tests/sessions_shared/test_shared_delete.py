"""A delete is a write (issue 24): a session another host process holds cannot be deleted, and a
session deleted anyway (by hand, behind the host's back) makes the holder's next write fail
loudly: never a silent success whose entries go nowhere (SQLite's orphan rows), never the file
written again (JSONL's undone delete)."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest
from shared_helpers import STORES, chat, delete_by_hand, host, last_reply, stderr_of, stored, user_texts


@pytest.mark.slow
@pytest.mark.parametrize("store", STORES)
async def test_a_session_open_in_another_host_cannot_be_deleted(tmp_path: Path, store: tuple[str, ...]) -> None:
    async with host(tmp_path, "a", *store) as a:
        await chat(a, "one")
        owner = await a.client.call("get_state")
        async with host(tmp_path, "b", *store) as b:
            response = await b.client.request({"type": "delete_session", "sessionId": owner["sessionId"]})
            assert response["success"] is False
            assert response["error"].startswith(f"Cannot delete session {owner['sessionId']}: it is open for writing")
            assert "Close it there first." in response["error"]
            assert [s["id"] for s in (await b.client.call("list_sessions"))["sessions"]] == [owner["sessionId"]]
        events = await chat(a, "two")  # the owner goes on as if nothing happened
        assert last_reply(events)["stopReason"] == "stop"
        assert user_texts(stored(owner["sessionLocation"])) == ["one", "two"]
    async with host(tmp_path, "c", *store) as c:  # the holder is gone: now it may go
        assert (await c.client.request({"type": "delete_session", "sessionId": owner["sessionId"]}))["success"]
        assert (await c.client.call("list_sessions"))["sessions"] == []
    assert stored(owner["sessionLocation"]) == []


@pytest.mark.slow
@pytest.mark.parametrize("store", STORES)
async def test_a_killed_holder_does_not_keep_its_session_from_being_deleted(
    tmp_path: Path, store: tuple[str, ...]
) -> None:
    async with host(tmp_path, "a", *store) as a:
        await chat(a, "one")
        owner = await a.client.call("get_state")
        os.kill(a.client.proc.pid, signal.SIGKILL)
        await a.client.proc.wait()
        async with host(tmp_path, "b", *store) as b:
            assert (await b.client.request({"type": "delete_session", "sessionId": owner["sessionId"]}))["success"]
            assert (await b.client.call("list_sessions"))["sessions"] == []


@pytest.mark.parametrize("store", STORES)
async def test_a_session_deleted_underneath_fails_the_next_write_loudly(tmp_path: Path, store: tuple[str, ...]) -> None:
    async with host(tmp_path, "a", *store) as a:
        await chat(a, "one")
        owner = await a.client.call("get_state")
        delete_by_hand(owner["sessionLocation"])
        events = await chat(a, "two")
        reply = last_reply(events)
        assert reply["stopReason"] == "error"
        assert reply["errorMessage"] == (
            f"Could not save the session: Session was deleted while open here: {owner['sessionLocation']}. "
            "Nothing more is saved to it; clone it to keep this conversation in a new session."
        )
        assert [e["type"] for e in events][-2:] == ["agent_end", "agent_settled"]
        name = await a.client.request({"type": "set_session_name", "name": "n"})
        assert name["success"] is False and name["error"].startswith("Session was deleted while open here")
        assert stored(owner["sessionLocation"]) == []  # not written again, no orphan rows
        assert "two" not in str(await a.client.get_messages())  # memory agrees with the store
        assert await a.client.call("clone") == {"cancelled": False}  # what the message advises keeps it
        clone = await a.client.call("get_state")
        assert clone["sessionId"] != owner["sessionId"]
        assert user_texts(stored(clone["sessionLocation"])) == ["one"]
        await chat(a, "three")
        assert user_texts(stored(clone["sessionLocation"])) == ["one", "three"]
    assert "Session was deleted while open here" in stderr_of(tmp_path, "a")


@pytest.mark.slow
@pytest.mark.parametrize("store", STORES)
async def test_deletes_racing_a_writing_host_lose_nothing_it_acknowledged(
    tmp_path: Path, store: tuple[str, ...]
) -> None:
    """Host B sends delete_session over and over while host A writes turn after turn: every delete
    is refused and every turn A acknowledged is stored."""
    async with host(tmp_path, "a", *store) as a:
        await chat(a, "turn 0")
        owner = await a.client.call("get_state")
        async with host(tmp_path, "b", *store) as b:

            async def deletes() -> list[dict[str, object]]:
                answers = []
                for _ in range(15):
                    answers.append(await b.client.request({"type": "delete_session", "sessionId": owner["sessionId"]}))
                    await asyncio.sleep(0.01)
                return answers

            racing = asyncio.ensure_future(deletes())
            for turn in range(1, 6):
                assert last_reply(await chat(a, f"turn {turn}"))["stopReason"] == "stop"
            answers = await racing
        assert all(not r["success"] and "open for writing" in str(r["error"]) for r in answers)
        assert user_texts(stored(owner["sessionLocation"])) == [f"turn {i}" for i in range(6)]
