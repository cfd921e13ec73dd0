"""Slice 4: risky tools ask the client (session/request_permission); allow once, allow always
(remembered for the session), reject; modes that change the policy."""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp import text_block
from acp_helpers import RecordingClient, acp_host, wait_for


async def _bash_turn(host, sid: str, call_id: str, command: str = "echo ok") -> None:
    host.faux.tool_call("bash", {"command": command}, call_id)
    host.faux.push("done")
    response = await asyncio.wait_for(host.conn.prompt(session_id=sid, prompt=[text_block("go")]), 30)
    assert response.stop_reason == "end_turn"


def _final(host, call_id: str):
    return [u for u in host.client.of("tool_call_update") if u.tool_call_id == call_id and u.status][-1]


async def test_allow_once_asks_every_time(tmp_path: Path) -> None:
    client = RecordingClient(answers=["allow_once", "allow_once"])
    async with acp_host(tmp_path, client=client) as host:
        sid = (await host.new_session()).session_id
        await _bash_turn(host, sid, "b1", "echo first")
        (request,) = client.permission_requests
        assert request["session_id"] == sid
        assert request["tool_call"].tool_call_id == "b1"
        assert request["tool_call"].kind == "execute"
        assert [o.kind for o in request["options"]] == ["allow_once", "allow_always", "reject_once"]
        start = host.client.of("tool_call", sid)[0]
        assert start.status == "pending"  # until the user answers
        assert "first" in _final(host, "b1").content[0].content.text
        await _bash_turn(host, sid, "b2", "echo second")
        assert len(client.permission_requests) == 2
        assert _final(host, "b2").status == "completed"


async def test_allow_always_is_remembered_for_the_session(tmp_path: Path) -> None:
    client = RecordingClient(answers=["allow_always"])
    async with acp_host(tmp_path, client=client) as host:
        sid = (await host.new_session()).session_id
        await _bash_turn(host, sid, "b1")
        await _bash_turn(host, sid, "b2")
        assert len(client.permission_requests) == 1
        assert _final(host, "b2").status == "completed"
        # another session asks again
        other = (await host.new_session()).session_id
        client.answers.append("allow_once")
        await _bash_turn(host, other, "b3")
        assert len(client.permission_requests) == 2


async def test_reject_blocks_the_tool(tmp_path: Path) -> None:
    client = RecordingClient(answers=["reject_once"])
    async with acp_host(tmp_path, client=client) as host:
        (host.cwd / "keep.txt").write_text("original\n")
        sid = (await host.new_session()).session_id
        host.faux.tool_call("write", {"path": "keep.txt", "content": "overwritten\n"}, "w1")
        host.faux.push("ok, I will not")
        await host.conn.prompt(session_id=sid, prompt=[text_block("overwrite")])
        (request,) = client.permission_requests
        diff = request["tool_call"].content[0]
        assert diff.type == "diff" and diff.old_text == "original\n" and diff.new_text == "overwritten\n"
        final = _final(host, "w1")
        assert final.status == "failed"
        assert "rejected" in final.content[0].content.text
        assert (host.cwd / "keep.txt").read_text() == "original\n"


async def test_safe_tools_do_not_ask(tmp_path: Path) -> None:
    client = RecordingClient()
    async with acp_host(tmp_path, client=client) as host:
        (host.cwd / "a.txt").write_text("a\n")
        sid = (await host.new_session()).session_id
        host.faux.tool_call("read", {"path": "a.txt"}, "r1")
        host.faux.push("read")
        await host.conn.prompt(session_id=sid, prompt=[text_block("read")])
        assert client.permission_requests == []


async def test_cancel_while_asking_answers_cancelled(tmp_path: Path) -> None:
    client = RecordingClient(hold_permission=asyncio.Event())
    async with acp_host(tmp_path, client=client) as host:
        sid = (await host.new_session()).session_id
        host.faux.tool_call("bash", {"command": "echo never"}, "b1")
        host.faux.push("never")
        pending = asyncio.create_task(host.conn.prompt(session_id=sid, prompt=[text_block("go")]))
        await asyncio.wait_for(client.permission_asked.wait(), 10)
        await host.conn.cancel(session_id=sid)
        response = await asyncio.wait_for(pending, 10)
        assert response.stop_reason == "cancelled"
        assert _final(host, "b1").status == "failed"
        client.hold_permission.set()


async def test_slow_answer_outlasts_the_hook_time_bound(tmp_path: Path) -> None:
    client = RecordingClient(hold_permission=asyncio.Event())
    async with acp_host(tmp_path, settings={"hookTimeoutMs": 200}, client=client) as host:
        sid = (await host.new_session()).session_id
        host.faux.tool_call("bash", {"command": "echo late"}, "b1")
        host.faux.push("done")
        pending = asyncio.create_task(host.conn.prompt(session_id=sid, prompt=[text_block("go")]))
        await asyncio.wait_for(client.permission_asked.wait(), 10)
        await asyncio.sleep(0.6)  # three time bounds: the user is thinking, not the plugin hanging
        assert not [u for u in host.client.of("tool_call_update", sid) if u.status == "completed"]
        client.hold_permission.set()
        assert (await asyncio.wait_for(pending, 10)).stop_reason == "end_turn"
        assert "late" in _final(host, "b1").content[0].content.text
        assert "timed out" not in host.stderr()


async def test_modes(tmp_path: Path) -> None:
    client = RecordingClient()
    async with acp_host(tmp_path, client=client) as host:
        new = await host.new_session()
        sid = new.session_id
        assert new.modes.current_mode_id == "default"
        assert {m.id for m in new.modes.available_modes} == {"default", "accept_edits", "read_only", "allow_all"}
        await host.conn.set_session_mode(session_id=sid, mode_id="read_only")
        await _bash_turn(host, sid, "b1")
        assert client.permission_requests == []
        final = _final(host, "b1")
        assert final.status == "failed" and "Read only" in final.content[0].content.text
        await host.conn.set_session_mode(session_id=sid, mode_id="accept_edits")
        host.faux.tool_call("write", {"path": "f.txt", "content": "x"}, "w1")
        host.faux.push("written")
        await host.conn.prompt(session_id=sid, prompt=[text_block("write")])
        assert client.permission_requests == []
        assert (host.cwd / "f.txt").read_text() == "x"
        await wait_for(lambda: host.client.of("current_mode_update", sid))
