"""``--watch`` hot reload of local extensions, and settings files (corrupt, project, atomic writes)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from host_helpers import errors_of, poll

V1 = """\
from atomic_host import hookimpl
from atomic_host.contract.commands import SlashCommand


@hookimpl
def register_commands(register):
{body}
"""


def _ext(names: list[str]) -> str:
    body = "\n".join(f'    register(SlashCommand("{n}", lambda args, api: None))' for n in names)
    return V1.format(body=body)


async def _names(client) -> list[str]:
    return sorted(c["name"] for c in (await client.get_commands()).commands)


async def test_watch_reload_add_command_syntax_error_and_between_turns(rpc_host, tmp_path: Path) -> None:
    ext_dir = tmp_path / "agent" / "extensions"
    ext_dir.mkdir(parents=True)
    ext = ext_dir / "live.py"
    ext.write_text(_ext(["one"]))
    async with rpc_host("--watch") as host:
        c = host.client
        assert await _names(c) == ["one", "permissions", "workflow"]  # and the built-in /permissions, /workflow

        ext.write_text(_ext(["one", "two"]))

        async def has_two() -> bool:
            return await _names(c) == ["one", "permissions", "two", "workflow"]

        await poll(has_two, timeout=5)

        # A broken edit keeps the old version and says why.
        before = len(errors_of(host))
        ext.write_text(_ext(["one", "two", "three"]) + "\ndef broken(:\n")
        err = await poll(lambda: errors_of(host)[before:], timeout=5)
        assert err[0]["extensionPath"] == str(ext.resolve()) and err[0]["event"] == "reload"
        assert "SyntaxError" in err[0]["error"] or "invalid syntax" in err[0]["error"]
        assert await _names(c) == ["one", "permissions", "two", "workflow"]

        # Mid-turn edits wait for the turn to end.
        host.faux.push({"content": [{"type": "text", "text": "slow"}], "delayMs": 2000})
        start = len(c.events)
        await c.prompt("go")
        await c.wait_for_event("agent_start", after=start)
        ext.write_text(_ext(["one", "two", "late"]))
        for _ in range(8):  # ~1 s of polling while the reply is still pending
            assert "late" not in await _names(c)
            await asyncio.sleep(0.12)
        assert not any(e["type"] == "turn_end" for e in c.events[start:])
        await c.wait_for_idle(after=start)

        async def has_late() -> bool:
            return "late" in await _names(c)

        await poll(has_late, timeout=5)


async def test_corrupt_settings_reported_and_ignored(tmp_path: Path) -> None:
    from atomic_host.testing import start_host

    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text('{"steeringMode": "all", oops')
    log = tmp_path / "stderr.txt"
    with log.open("wb") as err:
        async with start_host(base=tmp_path, stderr=err.fileno()) as host:
            state = await host.client.get_state()
            assert state["steeringMode"] == "one-at-a-time"  # the default: the file was ignored
    assert "settings" in log.read_text()
    assert str(agent / "settings.json") in log.read_text()


async def test_project_settings_merge_only_when_trusted(rpc_host, tmp_path: Path) -> None:
    cwd = tmp_path / "proj"
    (cwd / ".atomic").mkdir(parents=True)
    (cwd / ".atomic" / "settings.json").write_text(json.dumps({"followUpMode": "all"}))
    glob = {"steeringMode": "all", "retry": {"enabled": True, "maxRetries": 7}}
    async with rpc_host(cwd=cwd, settings=glob) as host:
        state = await host.client.get_state()
        assert state["followUpMode"] == "one-at-a-time" and state["steeringMode"] == "all"
    async with rpc_host("--approve", cwd=cwd, settings=glob) as host:
        state = await host.client.get_state()
        assert state["followUpMode"] == "all" and state["steeringMode"] == "all"  # deep-merged


async def test_set_steering_mode_writes_global_file_atomically(rpc_host, tmp_path: Path) -> None:
    glob = {"theme": "dark", "retry": {"maxRetries": 5}, "steeringMode": "one-at-a-time"}
    async with rpc_host(settings=glob) as host:
        await host.client.call("set_steering_mode", mode="all")
        path = tmp_path / "agent" / "settings.json"
        data = json.loads(path.read_text())
        assert data == {**glob, "steeringMode": "all"}
        leftovers = [p.name for p in path.parent.iterdir() if p.name != "settings.json" and "settings" in p.name]
        assert leftovers == []  # no temp file left behind
        assert (await host.client.get_state())["steeringMode"] == "all"
    assert os.path.exists(path)
