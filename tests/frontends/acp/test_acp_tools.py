"""Slice 2: tool calls as tool_call / tool_call_update (kind, title, status, locations, diffs), and
the plan from the todo tool."""

from __future__ import annotations

from pathlib import Path

from acp import text_block
from acp_helpers import acp_host

ALLOW_ALL = {"acp": {"defaultMode": "allow_all"}}


async def test_read_tool_call_and_update(tmp_path: Path) -> None:
    async with acp_host(tmp_path) as host:
        (host.cwd / "notes.txt").write_text("first line\nsecond line\n")
        sid = (await host.new_session()).session_id
        host.faux.tool_call("read", {"path": "notes.txt"}, call_id="call-1")
        host.faux.push("I read it.")
        response = await host.conn.prompt(session_id=sid, prompt=[text_block("read notes")])
        assert response.stop_reason == "end_turn"
        (start,) = host.client.of("tool_call", sid)
        assert start.tool_call_id == "call-1"
        assert start.kind == "read"
        assert start.title == "Read notes.txt"
        assert start.status == "in_progress"
        assert start.locations[0].path == str(host.cwd / "notes.txt")
        assert start.raw_input == {"path": "notes.txt"}
        final = host.client.of("tool_call_update", sid)[-1]
        assert final.tool_call_id == "call-1"
        assert final.status == "completed"
        assert "second line" in final.content[0].content.text
        kinds = host.client.kinds(sid)
        assert kinds.index("tool_call") < kinds.index("tool_call_update")
        assert host.client.text(session_id=sid).endswith("I read it.")


async def test_failed_tool_call_is_failed(tmp_path: Path) -> None:
    async with acp_host(tmp_path) as host:
        sid = (await host.new_session()).session_id
        host.faux.tool_call("read", {"path": "missing.txt"}, call_id="call-x")
        host.faux.push("It is not there.")
        await host.conn.prompt(session_id=sid, prompt=[text_block("read it")])
        final = host.client.of("tool_call_update", sid)[-1]
        assert final.status == "failed"
        assert final.content and final.content[0].content.text


async def test_edit_and_write_carry_diffs(tmp_path: Path) -> None:
    async with acp_host(tmp_path, settings=ALLOW_ALL) as host:
        target = host.cwd / "app.py"
        target.write_text("x = 1\ny = 2\n")
        sid = (await host.new_session()).session_id
        host.faux.tool_call("edit", {"path": "app.py", "edits": [{"oldText": "y = 2", "newText": "y = 3"}]}, "e1")
        host.faux.tool_call("write", {"path": "new.txt", "content": "hello\n"}, "w1")
        host.faux.push("Done.")
        await host.conn.prompt(session_id=sid, prompt=[text_block("change it")])
        starts = {u.tool_call_id: u for u in host.client.of("tool_call", sid)}
        edit, write = starts["e1"], starts["w1"]
        assert edit.kind == "edit" and edit.title == "Edit app.py"
        (diff,) = edit.content
        assert diff.type == "diff"
        assert diff.path == str(target)
        assert diff.old_text == "x = 1\ny = 2\n"
        assert diff.new_text == "x = 1\ny = 3\n"
        assert write.content[0].type == "diff"
        assert write.content[0].old_text is None  # a new file
        assert write.content[0].new_text == "hello\n"
        ends = {u.tool_call_id: u for u in host.client.of("tool_call_update", sid) if u.status}
        assert ends["e1"].status == "completed"
        assert ends["e1"].content[0].type == "diff"  # the diff stays with the finished call
        assert target.read_text() == "x = 1\ny = 3\n"
        assert (host.cwd / "new.txt").read_text() == "hello\n"


async def test_bash_streams_output_and_is_execute(tmp_path: Path) -> None:
    async with acp_host(tmp_path, settings=ALLOW_ALL) as host:
        sid = (await host.new_session()).session_id
        host.faux.tool_call("bash", {"command": "echo hi-from-bash"}, "b1")
        host.faux.push("ran it")
        await host.conn.prompt(session_id=sid, prompt=[text_block("run")])
        (start,) = host.client.of("tool_call", sid)
        assert start.kind == "execute"
        assert start.title == "`echo hi-from-bash`"
        final = [u for u in host.client.of("tool_call_update", sid) if u.status == "completed"][-1]
        assert "hi-from-bash" in final.content[0].content.text


async def test_todo_results_become_a_plan(tmp_path: Path) -> None:
    async with acp_host(tmp_path) as host:
        sid = (await host.new_session()).session_id
        host.faux.tool_call("todo", {"action": "create", "title": "Write the parser"}, "t1")
        host.faux.tool_call("todo", {"action": "create", "title": "Test it", "status": "in-progress"}, "t2")
        host.faux.push("planned")
        await host.conn.prompt(session_id=sid, prompt=[text_block("plan")])
        plans = host.client.of("plan", sid)
        assert plans
        entries = plans[-1].entries
        assert [(e.content, e.status) for e in entries] == [("Write the parser", "pending"), ("Test it", "in_progress")]
        start = host.client.of("tool_call", sid)[0]
        assert start.kind == "think"
