"""In ACP mode the approvals plugin is the one place a tool call is allowed, asked about (with
``session/request_permission``, driven here by the ACP SDK's own client) or refused: the settings
rules, ``--permission-mode`` and ``/permissions`` act on ACP sessions as on RPC ones, and ACP's mode
ids are names for the permission modes. Before: ACP had a gate of its own, blind to the rules."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acp import text_block
from acp_helpers import RecordingClient, acp_host


def _final(host: Any, sid: str, call_id: str) -> Any:
    return [u for u in host.client.of("tool_call_update", sid) if u.tool_call_id == call_id and u.status][-1]


async def _turn(host: Any, sid: str, *calls: tuple[str, str, dict[str, Any]]) -> None:
    host.faux.push({"content": [{"type": "toolCall", "name": n, "arguments": a, "id": i} for n, i, a in calls]})
    host.faux.push("done")
    response = await asyncio.wait_for(host.conn.prompt(session_id=sid, prompt=[text_block("go")]), 30)
    assert response.stop_reason == "end_turn"


def _text(update: Any) -> str:
    return update.content[0].content.text


async def test_settings_rules_decide_in_acp_and_a_session_approval_is_by_command_prefix(tmp_path: Path) -> None:
    settings = {"permissions": {"deny": ["Bash(rm:*)"], "ask": ["Read(secret.txt)"]}}
    client = RecordingClient(answers=["allow_always", "reject_once", "allow_once"])
    async with acp_host(tmp_path, settings=settings, client=client) as host:
        (host.cwd / "secret.txt").write_text("s3cret\n")
        sid = (await host.new_session()).session_id
        await _turn(
            host,
            sid,
            ("bash", "b1", {"command": "echo hello"}),
            ("read", "r1", {"path": "secret.txt"}),
            ("bash", "b2", {"command": "rm -f secret.txt"}),
        )
        asked = client.permission_requests
        assert [r["tool_call"].tool_call_id for r in asked] == ["b1", "r1"]  # b2: refused by the rule, unasked
        assert asked[0]["options"][1].name == "Always allow Bash(echo hello:*) (this session)"
        assert _final(host, sid, "r1").status == "failed" and "rejected" in _text(_final(host, sid, "r1"))
        denied = _final(host, sid, "b2")
        assert denied.status == "failed"
        assert _text(denied) == "Permission to use bash was denied by the rule Bash(rm:*) (user settings)"
        assert (host.cwd / "secret.txt").exists()
        await _turn(host, sid, ("bash", "b3", {"command": "echo hello again"}), ("bash", "b4", {"command": "echo bye"}))
        assert [r["tool_call"].tool_call_id for r in asked] == ["b1", "r1", "b4"]  # b3: allowed by prefix
        assert "hello again" in _text(_final(host, sid, "b3"))


async def test_the_permission_mode_flag_and_command_set_the_acp_mode(tmp_path: Path) -> None:
    client = RecordingClient()
    async with acp_host(tmp_path, "--permission-mode", "plan", client=client) as host:
        new = await host.new_session()
        sid = new.session_id
        assert new.modes.current_mode_id == "read_only"
        await _turn(host, sid, ("bash", "b1", {"command": "echo hi"}))
        assert client.permission_requests == []
        assert _text(_final(host, sid, "b1")).startswith("bash is not allowed in Read only mode: plan mode runs")
        await asyncio.wait_for(host.conn.prompt(session_id=sid, prompt=[text_block("/permissions acceptEdits")]), 30)
        moded = await host.conn.set_config_option(config_id="thought_level", session_id=sid, value="off")
        assert {o.id: o.current_value for o in moded.config_options}["mode"] == "accept_edits"
        await _turn(host, sid, ("write", "w1", {"path": "f.txt", "content": "x"}), ("bash", "b2", {"command": "ls"}))
        assert [r["tool_call"].tool_call_id for r in client.permission_requests] == ["b2"]
        assert (host.cwd / "f.txt").read_text() == "x"


async def test_without_the_approvals_plugin_acp_runs_every_tool(tmp_path: Path) -> None:
    client = RecordingClient()
    settings = {"disabledPlugins": ["builtin_plugins.approvals"]}
    async with acp_host(tmp_path, settings=settings, client=client) as host:
        new = await host.new_session()
        assert new.modes.current_mode_id == "allow_all"
        await _turn(host, new.session_id, ("bash", "b1", {"command": "touch made"}))
        assert client.permission_requests == [] and (host.cwd / "made").exists()
