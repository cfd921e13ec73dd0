"""Slice 5: session/list and session/load of a stored session (history replayed as session/update
notifications before the response), and switching between the connection's sessions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from acp import RequestError, text_block
from acp_helpers import acp_host

pytestmark = pytest.mark.slow  # ACP hosts started again on stored sessions


async def _first_conversation(tmp_path: Path) -> str:
    async with acp_host(tmp_path) as host:
        (host.cwd / "data.txt").write_text("forty-two\n")
        sid = (await host.new_session()).session_id
        host.faux.push(
            {
                "content": [
                    {"type": "thinking", "thinking": "Look at the file."},
                    {"type": "text", "text": "Reading."},
                    {"type": "toolCall", "id": "r1", "name": "read", "arguments": {"path": "data.txt"}},
                ]
            }
        )
        host.faux.push("The answer is forty-two.")
        await host.conn.prompt(session_id=sid, prompt=[text_block("What is in data.txt?")])
        return sid


async def test_list_and_load_replay_the_history(tmp_path: Path) -> None:
    sid = await _first_conversation(tmp_path)
    async with acp_host(tmp_path) as host:
        listed = await host.conn.list_sessions(cwd=str(host.cwd))
        (info,) = [s for s in listed.sessions if s.session_id == sid]
        assert info.title == "What is in data.txt?"
        assert info.cwd == str(host.cwd)
        assert info.updated_at
        loaded = await host.conn.load_session(cwd=str(host.cwd), session_id=sid, mcp_servers=[])
        assert loaded.modes.current_mode_id == "default"
        kinds = [k for k in host.client.kinds(sid) if k != "available_commands_update"]
        assert kinds == [
            "user_message_chunk",
            "agent_thought_chunk",
            "agent_message_chunk",
            "tool_call",
            "agent_message_chunk",
        ]
        assert host.client.text("user_message_chunk", sid) == "What is in data.txt?"
        assert host.client.text(session_id=sid) == "Reading.The answer is forty-two."
        (call,) = host.client.of("tool_call", sid)
        assert call.tool_call_id == "r1" and call.status == "completed" and call.kind == "read"
        assert "forty-two" in call.content[0].content.text
        # and the conversation goes on where it stopped
        host.faux.push("Still forty-two.")
        response = await host.conn.prompt(session_id=sid, prompt=[text_block("Sure?")])
        assert response.stop_reason == "end_turn"
        calls = [json.loads(line) for line in (tmp_path / "faux-log.jsonl").read_text().splitlines()]
        texts = json.dumps(calls[-1]["context"]["messages"])
        assert "What is in data.txt?" in texts and "Sure?" in texts


async def test_load_unknown_session_fails(tmp_path: Path) -> None:
    async with acp_host(tmp_path) as host:
        with pytest.raises(RequestError):
            await host.conn.load_session(cwd=str(host.cwd), session_id="0" * 8, mcp_servers=[])


async def test_prompts_switch_between_sessions_of_the_connection(tmp_path: Path) -> None:
    async with acp_host(tmp_path) as host:
        a = (await host.new_session()).session_id
        host.faux.push("answer in A")
        await host.conn.prompt(session_id=a, prompt=[text_block("question for A")])
        b = (await host.new_session()).session_id
        host.faux.push("answer in B")
        await host.conn.prompt(session_id=b, prompt=[text_block("question for B")])
        host.faux.push("A again")
        await host.conn.prompt(session_id=a, prompt=[text_block("back to A")])
        assert host.client.text(session_id=a) == "answer in AA again"
        assert host.client.text(session_id=b) == "answer in B"
        calls = [json.loads(line) for line in (tmp_path / "faux-log.jsonl").read_text().splitlines()]
        last = json.dumps(calls[-1]["context"]["messages"])
        assert "question for A" in last and "question for B" not in last


async def test_session_of_another_directory(tmp_path: Path) -> None:
    """The editor's project need not be the directory the agent was started in."""
    project = tmp_path / "project"
    project.mkdir()
    async with acp_host(tmp_path) as host:
        sid = (await host.conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        (project / "here.txt").write_text("in the project\n")
        host.faux.tool_call("read", {"path": "here.txt"}, "r1")
        host.faux.push("found it")
        await host.conn.prompt(session_id=sid, prompt=[text_block("read here.txt")])
        assert host.client.of("tool_call", sid)[0].locations[0].path == str(project / "here.txt")
        assert [u for u in host.client.of("tool_call_update", sid) if u.status][-1].status == "completed"
    async with acp_host(tmp_path) as host:
        listed = await host.conn.list_sessions(cwd=str(project))
        assert sid in [s.session_id for s in listed.sessions]
        await host.conn.load_session(cwd=str(project), session_id=sid, mcp_servers=[])
        assert host.client.text("user_message_chunk", sid) == "read here.txt"
