"""The process: stdout carries only JSON-RPC (plugin prints go to stderr), stdin EOF ends the host
cleanly, SIGTERM ends it at once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp import text_block
from acp_helpers import acp_host

PLUGINS = Path(__file__).resolve().parent.parent / "plugins"


async def test_plugin_prints_never_reach_the_protocol_stream(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    async with acp_host(tmp_path, "-e", str(PLUGINS / "noisy_stdout.py")) as host:
        sid = (await host.new_session()).session_id
        host.faux.push("quiet answer")
        assert (await host.conn.prompt(session_id=sid, prompt=[text_block("/noisy")])).stop_reason == "end_turn"
        assert (await host.conn.prompt(session_id=sid, prompt=[text_block("hi")])).stop_reason == "end_turn"
        process = host.process
    assert process.returncode == 0  # stdin closed: a clean exit
    err = host.stderr()
    for noise in ("NOISE-AT-IMPORT", "NOISE-WRITE", "NOISE-IN-REGISTER", "NOISE-IN-COMMAND"):
        assert noise in err
    assert host.wire and all(m.get("jsonrpc") == "2.0" for m in host.wire)
    assert "NOISE" not in json.dumps(host.wire)
    assert not [r for r in caplog.records if "parsing JSON-RPC" in r.getMessage()]  # no stray line on stdout


async def test_sigterm_ends_the_host(tmp_path: Path) -> None:
    async with acp_host(tmp_path) as host:
        await host.new_session()
        host.process.terminate()
        assert await asyncio.wait_for(host.process.wait(), 10) == 143
