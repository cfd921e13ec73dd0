"""Slice 6: image and resource prompts, config options (model, thinking), slash commands and
extension notices, MCP servers from the client, the ``_atomic/...`` extensions, session titles,
and ACP staying out of ``--mode rpc``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from acp import RequestError, embedded_text_resource, image_block, resource_block, resource_link_block, text_block
from acp.schema import McpServerStdio
from acp_helpers import acp_host, wait_for

PLUGINS = Path(__file__).resolve().parent.parent / "plugins"
# a real 1x1 PNG: the host refuses image data that is not a picture that decodes (issue 27)
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def _faux_calls(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "faux-log.jsonl").read_text().splitlines()]


async def test_image_and_resource_blocks_reach_the_model(tmp_path: Path) -> None:
    async with acp_host(tmp_path) as host:
        sid = (await host.new_session()).session_id
        host.faux.push("seen")
        prompt = [
            text_block("Look at these"),
            image_block(PNG, "image/png"),
            resource_block(embedded_text_resource("file:///src/main.py", "print('hi')\n", mime_type="text/x-python")),
            resource_link_block("README.md", "file:///src/README.md"),
        ]
        assert (await host.conn.prompt(session_id=sid, prompt=prompt)).stop_reason == "end_turn"
        (user,) = [m for m in _faux_calls(tmp_path)[-1]["context"]["messages"] if m["role"] == "user"]
        text = "".join(b.get("text", "") for b in user["content"] if b["type"] == "text")
        assert text.startswith("Look at these")
        assert "<context uri=\"file:///src/main.py\">\nprint('hi')\n\n</context>" in text
        assert "@/src/README.md" in text
        images = [b for b in user["content"] if b["type"] == "image"]
        assert images == [{"type": "image", "data": PNG, "mimeType": "image/png"}]


async def test_audio_is_refused(tmp_path: Path) -> None:
    from acp import audio_block

    async with acp_host(tmp_path) as host:
        sid = (await host.new_session()).session_id
        with pytest.raises(RequestError) as info:
            await host.conn.prompt(session_id=sid, prompt=[audio_block("AAAA", "audio/wav")])
        assert info.value.code == -32602


async def test_config_options_model_and_thinking(tmp_path: Path) -> None:
    async with acp_host(tmp_path) as host:
        new = await host.new_session()
        sid = new.session_id
        options = {o.id: o for o in new.config_options}
        assert set(options) == {"mode", "model", "thought_level"}
        assert options["model"].current_value == "faux/faux-1"
        assert options["model"].category == "model"
        assert "high" in [o.value for o in options["thought_level"].options]
        changed = await host.conn.set_config_option(config_id="thought_level", session_id=sid, value="high")
        assert {o.id: o.current_value for o in changed.config_options}["thought_level"] == "high"
        await wait_for(lambda: host.client.of("config_option_update", sid))
        host.faux.push("thinking hard")
        await host.conn.prompt(session_id=sid, prompt=[text_block("think")])
        assert _faux_calls(tmp_path)[-1]["options"]["reasoning"] == "high"
        same = await host.conn.set_config_option(config_id="model", session_id=sid, value="faux/faux-1")
        assert {o.id: o.current_value for o in same.config_options}["model"] == "faux/faux-1"
        with pytest.raises(RequestError):
            await host.conn.set_config_option(config_id="model", session_id=sid, value="nope/none")
        moded = await host.conn.set_config_option(config_id="mode", session_id=sid, value="read_only")
        assert {o.id: o.current_value for o in moded.config_options}["mode"] == "read_only"


async def test_slash_command_runs_and_its_notice_shows(tmp_path: Path) -> None:
    ext = tmp_path / "notify_cmd.py"
    ext.write_text(
        "from atomic_host import hookimpl\n"
        "from atomic_host.contract.commands import SlashCommand\n\n"
        "def _run(args, api):\n"
        "    api.ui.notify(f'hello {args}')\n\n"
        "@hookimpl\n"
        "def register_commands(register):\n"
        "    register(SlashCommand('greet', _run, description='Greet someone'))\n"
    )
    async with acp_host(tmp_path, "-e", str(ext)) as host:
        sid = (await host.new_session()).session_id
        commands = await wait_for(lambda: host.client.of("available_commands_update", sid))
        (greet,) = [c for c in commands[-1].available_commands if c.name == "greet"]
        assert greet.description == "Greet someone"
        response = await host.conn.prompt(session_id=sid, prompt=[text_block("/greet world")])
        assert response.stop_reason == "end_turn"
        assert response.field_meta == {"atomic": {"disposition": "handled"}}
        assert host.client.text(session_id=sid) == "hello world"
        assert not (tmp_path / "faux-log.jsonl").exists()  # the model was not asked


async def test_client_mcp_servers_are_noted(tmp_path: Path) -> None:
    async with acp_host(tmp_path) as host:
        server = McpServerStdio(name="time", command="mcp-server-time", args=[], env=[])
        new = await host.conn.new_session(cwd=str(host.cwd), mcp_servers=[server])
        note = new.field_meta["atomic"]
        assert note["mcpServersIgnored"] == ["time"]
        assert "MCP" in note["note"]
        assert "ignored 1 MCP server" in host.stderr()


async def test_atomic_command_and_events(tmp_path: Path) -> None:
    async with acp_host(tmp_path, "-e", str(PLUGINS / "boom_tool_call.py")) as host:
        init_meta = host.init.agent_capabilities.field_meta["atomic"]
        assert set(init_meta["methods"]) == {"_atomic/command", "_atomic/subscribe"}
        sid = (await host.new_session()).session_id
        state = await host.conn.ext_method("atomic/command", {"type": "get_state"})
        assert state["data"]["sessionId"] == sid
        assert state["data"]["model"]["id"] == "faux-1"
        with pytest.raises(RequestError):
            await host.conn.ext_method("atomic/command", {"type": "no_such_command"})
        with pytest.raises(RequestError):
            await host.conn.ext_method("atomic/command", {"type": "set_session_name"})  # missing name
        await host.conn.ext_method("atomic/command", {"type": "set_session_name", "name": "My thread"})
        info = await wait_for(lambda: host.client.of("session_info_update", sid))
        assert info[-1].title == "My thread"
        assert (await host.conn.ext_method("atomic/subscribe", {"events": True})) == {"subscribed": True}
        (host.cwd / "a.txt").write_text("a")
        host.faux.tool_call("read", {"path": "a.txt"}, "r1")
        host.faux.push("ok")
        await host.conn.prompt(session_id=sid, prompt=[text_block("read")])
        events = [p for m, p in host.client.ext if m == "atomic/event"]  # the SDK strips the leading underscore
        kinds = [e["type"] for e in events]
        assert "agent_start" in kinds and "tool_execution_end" in kinds
        errors = [e for e in events if e["type"] == "extension_error"]
        assert errors and "boom in tool_call" in errors[0]["error"]
        tree = await host.conn.ext_method("atomic/command", {"type": "get_tree"})
        assert tree["data"]["tree"]


async def test_rpc_mode_never_imports_the_acp_sdk(tmp_path: Path) -> None:
    env = {"ATOMIC_CODING_AGENT_DIR": str(tmp_path / "agent"), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "atomic_host", "--mode", "rpc", "--no-session"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=tmp_path,
    )
    modules = [
        line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")
    ]
    assert "atomic_host.frontends.rpc.server" in modules
    assert not [m for m in modules if m == "acp" or m.startswith(("acp.", "atomic_host.frontends.acp"))]
