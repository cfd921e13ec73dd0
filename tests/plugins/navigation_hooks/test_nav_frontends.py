"""Session hooks fire from the engine, so every frontend gets them: print mode (``atomic -p``,
new session, ``--session``/``--continue`` of a stored one, ``--name``) and ACP (``session/new``,
``session/load``), each with the recorder plugin loaded by the real host."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from acp import text_block
from acp_helpers import acp_host  # the ACP tests' harness: a real atomic --mode acp
from nav_helpers import RECORDER, hooks_of, read_log, run_print_mode, write_plugin


def test_print_mode_new_and_resumed_sessions_fire_session_hooks(tmp_path: Path) -> None:
    plugin = write_plugin(tmp_path, "recorder", RECORDER)
    log = tmp_path / "log.jsonl"
    env = {"NAV_LOG": str(log)}
    first = run_print_mode(
        tmp_path, "-e", str(plugin), "-p", "hello", "--name", "demo", "--output-format", "json", env=env
    )
    assert first.returncode == 0, first.stderr
    session_id = json.loads(first.stdout)["session_id"]
    records = read_log(log)
    assert hooks_of(records) == ["session_info_changed", "session_start", "session_shutdown"]
    named, started, _ = records
    assert (named["kind"], named["name"]) == ("name", "demo")
    assert named["sessionId"] == session_id  # the named session is already the active one
    assert started["reason"] == "startup" and started["previous_session_file"] is None
    assert started["sessionId"] == session_id

    log.unlink()
    resumed = run_print_mode(tmp_path, "-e", str(plugin), "-p", "again", "--session", session_id, env=env)
    assert resumed.returncode == 0, resumed.stderr
    records = read_log(log)
    assert hooks_of(records) == ["session_start", "session_shutdown"]
    assert records[0]["reason"] == "startup" and records[0]["sessionId"] == session_id

    log.unlink()
    continued = run_print_mode(tmp_path, "-e", str(plugin), "-p", "and again", "--continue", env=env)
    assert continued.returncode == 0, continued.stderr
    records = read_log(log)
    assert hooks_of(records) == ["session_start", "session_shutdown"]
    assert records[0]["reason"] == "startup" and records[0]["sessionId"] == session_id  # the same session


async def test_acp_session_new_and_load_fire_the_switch_hooks(tmp_path: Path) -> None:
    plugin = write_plugin(tmp_path, "recorder", RECORDER)
    log = tmp_path / "log.jsonl"
    async with acp_host(tmp_path, "-e", str(plugin), env={"NAV_LOG": str(log)}) as host:
        sid = (await host.new_session()).session_id
        host.faux.push("an answer")  # a session is stored once it has an answer
        await host.conn.prompt(session_id=sid, prompt=[text_block("a question")])
    records = read_log(log)
    assert hooks_of(records) == [
        "session_start",  # the host's startup session
        "session_before_switch",
        "session_shutdown",
        "session_start",
        "session_shutdown",  # exit
    ]
    startup, before, _, started, _ = records
    assert before["eventType"] == "SessionBeforeSwitchEvent" and before["reason"] == "new"
    assert started["reason"] == "new" and started["sessionId"] == sid
    assert started["previous_session_file"] is not None and startup["sessionId"] != sid

    log.unlink()
    async with acp_host(tmp_path, "-e", str(plugin), env={"NAV_LOG": str(log)}) as host:
        await host.conn.load_session(cwd=str(host.cwd), session_id=sid, mcp_servers=[])
    records = read_log(log)
    assert hooks_of(records)[1:4] == ["session_before_switch", "session_shutdown", "session_start"]
    before, started = records[1], records[3]
    assert before["reason"] == "resume" and before["target_session_file"]
    assert Path(before["target_session_file"]).name.endswith(f"{sid}.jsonl")
    assert started["reason"] == "resume" and started["sessionId"] == sid


@pytest.mark.parametrize("method", ["new", "load"])
async def test_acp_a_cancelled_switch_is_refused(tmp_path: Path, method: str) -> None:
    from acp import RequestError

    plugin = write_plugin(tmp_path, "recorder", RECORDER)
    log = tmp_path / "log.jsonl"
    sid = None
    if method == "load":
        async with acp_host(tmp_path) as host:
            sid = (await host.new_session()).session_id
            host.faux.push("an answer")
            await host.conn.prompt(session_id=sid, prompt=[text_block("a question")])
    env = {"NAV_LOG": str(log), "NAV_CANCEL": "session_before_switch"}
    async with acp_host(tmp_path, "-e", str(plugin), env=env) as host:
        with pytest.raises(RequestError) as refused:
            if sid is None:
                await host.new_session()
            else:
                await host.conn.load_session(cwd=str(host.cwd), session_id=sid, mcp_servers=[])
    expected = "A plugin cancelled the new session" if sid is None else "A plugin cancelled loading the session"
    assert expected in str(refused.value)
    assert hooks_of(read_log(log)) == ["session_start", "session_before_switch", "session_shutdown"]
