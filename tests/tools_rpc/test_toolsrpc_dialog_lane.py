"""A dialog the client ignores must not freeze the host (clients may skip records they do not
know): while an extension command waits on a ``select``, ``get_state`` and ``prompt`` are
served; ``abort`` ends the dialog (the extension gets the default); stdin EOF ends the host as it
does without a dialog, and SIGTERM after EOF ends it even when a command still runs."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path
from typing import Any

from atomic_host.testing import Host, start_host

EXT = str(Path(__file__).with_name("ext_dialog_lane.py"))


def _log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def _open_dialog(host: Host) -> asyncio.Future[Any]:
    """Send ``/ask`` and wait for its select request (left unanswered); returns the prompt's future."""
    c = host.client
    start = len(c.events)
    ask = asyncio.ensure_future(c.prompt("/ask"))
    request = await c.wait_for_event("extension_ui_request", after=start, timeout=20)
    assert request["method"] == "select" and request["options"] == ["red", "green"]
    return ask


async def test_other_commands_are_served_while_a_dialog_waits_and_abort_ends_it(tmp_path: Path) -> None:
    log = tmp_path / "dialog.jsonl"
    async with start_host("-e", EXT, env={"DIALOG_LANE_LOG": str(log)}) as host:
        c = host.client
        ask = await _open_dialog(host)
        t0 = time.monotonic()
        state = await c.call("get_state", timeout=5)
        assert time.monotonic() - t0 < 2 and state["isStreaming"] is False
        host.faux.push("a reply meanwhile")
        result = await c.prompt_and_wait("hello", timeout=20)
        assert result.ok and result.text == "a reply meanwhile"
        assert not ask.done()  # the command still waits for its answer
        start = len(c.events)
        await c.abort()  # the select ends with its default; the command asks its confirm next
        confirm = await c.wait_for_event("extension_ui_request", after=start, timeout=5)
        assert confirm["method"] == "confirm" and not ask.done()
        await c.abort()
        assert await asyncio.wait_for(ask, 5) == {"disposition": "handled"}
        entries = (await c.get_entries())["entries"]
        (asked,) = [e for e in entries if e.get("customType") == "asked"]
        assert asked["data"] == {"choice": None, "confirm": False}  # both dialogs: the default
    assert _log(log) == [{"ask": None, "confirm": False}]
    host.assert_protocol_lines()


async def test_stdin_eof_ends_the_host_with_a_dialog_pending(tmp_path: Path) -> None:
    log = tmp_path / "dialog.jsonl"
    async with start_host("-e", EXT, env={"DIALOG_LANE_LOG": str(log)}) as host:
        await _open_dialog(host)
        proc = host.client.proc
        assert proc is not None and proc.stdin is not None
        proc.stdin.close()
        t0 = time.monotonic()
        code = await asyncio.wait_for(proc.wait(), 15)
        waited = time.monotonic() - t0
    assert code == 0 and waited < 5, (code, waited)
    assert _log(log) == [{"ask": None, "confirm": False}]  # the extension got the defaults, at once


async def test_sigterm_after_eof_ends_the_host_while_a_command_runs(tmp_path: Path) -> None:
    log = tmp_path / "dialog.jsonl"
    async with start_host("-e", EXT, env={"DIALOG_LANE_LOG": str(log)}) as host:
        c = host.client
        await c.send_raw(b'{"type":"prompt","message":"/nap","id":"nap"}\n')
        for _ in range(200):
            if _log(log):
                break
            await asyncio.sleep(0.05)
        assert _log(log) == [{"nap": "start"}]
        proc = c.proc
        assert proc is not None and proc.stdin is not None
        proc.stdin.close()  # EOF: the host waits for /nap to finish (it holds the lane)
        await asyncio.sleep(0.5)
        assert proc.returncode is None
        proc.send_signal(signal.SIGTERM)
        t0 = time.monotonic()
        code = await asyncio.wait_for(proc.wait(), 15)
        waited = time.monotonic() - t0
    assert code == 143 and waited < 5, (code, waited)
