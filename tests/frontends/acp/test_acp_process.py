"""The process: stdout carries only JSON-RPC (plugin prints go to stderr), stdin EOF ends the host
cleanly, SIGTERM ends it at once."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from acp import text_block
from acp_helpers import acp_host
from suite_paths import SAMPLE_PLUGINS

from atomic_host.testing import host_env

PLUGINS = SAMPLE_PLUGINS


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


async def test_a_line_that_is_not_utf8_is_a_parse_error_and_the_host_goes_on(tmp_path: Path) -> None:
    """JSON-RPC lines are UTF-8 as in ``--mode rpc``: JSON in UTF-16 or a surrogate encoded in
    UTF-8 bytes is a -32700 parse error naming the byte; the connection serves the next request."""
    (tmp_path / "agent").mkdir()
    env = host_env(tmp_path / "agent", tmp_path / "faux.jsonl", tmp_path / "faux.log")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "atomic_host", "--mode", "acp", "--provider", "faux",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    proc.stdin.write(json.dumps(request).encode("utf-16") + b"\n")
    proc.stdin.write(b'{"jsonrpc":"2.0","id":2,"method":"x\xed\xa0\x80"}\n')
    proc.stdin.write(b"\xef\xbb\xbf" + json.dumps(request).encode() + b"\n")  # a BOM is skipped
    await proc.stdin.drain()
    replies = [json.loads(await asyncio.wait_for(proc.stdout.readline(), 20)) for _ in range(3)]
    proc.stdin.close()
    assert await asyncio.wait_for(proc.wait(), 20) == 0
    decoder = "Parse error: 'utf-8' codec can't decode byte"
    assert [r.get("error") for r in replies[:2]] == [
        {"code": -32700, "message": f"{decoder} 0xff in position 0: invalid start byte"},
        {"code": -32700, "message": f"{decoder} 0xed in position 35: invalid continuation byte"},
    ]
    assert replies[2]["id"] == 1 and replies[2]["result"]["protocolVersion"] == 1


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_a_stdout_that_takes_nothing_ends_the_host_with_1(tmp_path: Path) -> None:
    """stdout on a full disk: the first answer cannot be written, the host says so and leaves with 1
    (it went on silently, every message lost, until stdin closed)."""
    import subprocess

    agent, work = tmp_path / "agent", tmp_path / "work"
    agent.mkdir()
    work.mkdir()
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    with open("/dev/full", "wb") as full:
        run = subprocess.run(
            [sys.executable, "-m", "atomic_host", "--mode", "acp", "--provider", "faux"],
            input=(json.dumps(initialize) + "\n").encode(), stdout=full, stderr=subprocess.PIPE, cwd=work,
            timeout=60, env=host_env(agent, tmp_path / "faux.jsonl", tmp_path / "faux-log.jsonl"),
        )  # fmt: skip
    assert run.returncode == 1
    assert "cannot write to stdout (No space left on device); exiting" in run.stderr.decode()
    assert "Traceback" not in run.stderr.decode()
