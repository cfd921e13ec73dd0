"""Hostile lines against one real ``atomic --mode rpc``: every line gets exactly one answer, the
host never dies, and it still answers ``get_state`` after all of them (issue 8)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from atomic_host.testing import start_host

DEEP = 10_000


def _deep_array(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def _deep_object(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


async def _wait_for_answers(client: Any, count: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while len(client.responses) < count:
        assert time.monotonic() < deadline, f"{len(client.responses)} of {count} lines answered"
        await asyncio.sleep(0.05)


async def test_lines_nested_10000_deep_are_parse_errors_and_the_host_goes_on(tmp_path: Path) -> None:
    err = (tmp_path / "stderr.txt").open("wb")
    async with start_host("--no-session", stderr=err.fileno()) as host:
        c = host.client
        for line in (_deep_array(DEEP), _deep_object(DEEP), b'{"type":"get_state","id":' + _deep_array(DEEP) + b"}"):
            await c.send_raw(line + b"\n")
        await _wait_for_answers(c, 3, 10)
        for r in c.responses:
            assert r == {"type": "response", "command": "parse", "success": False,
                         "error": "Failed to parse command: JSON nested too deeply"}  # fmt: skip
        state = await c.get_state()
        assert state["isStreaming"] is False
        assert c.proc is not None and c.proc.returncode is None
        host.assert_protocol_lines()
    err.close()
    assert "Task exception was never retrieved" not in (tmp_path / "stderr.txt").read_text()


async def test_a_deep_but_decodable_id_is_echoed_verbatim() -> None:
    deep_id: Any = "leaf"
    for _ in range(800):
        deep_id = [deep_id]
    async with start_host("--no-session") as host:
        c = host.client
        await c.send_raw(json.dumps({"type": "get_state", "id": deep_id}).encode() + b"\n")
        await c.send_raw(json.dumps({"type": "no_such", "id": deep_id}).encode() + b"\n")
        await _wait_for_answers(c, 2, 10)
        by_command = {r["command"]: r for r in c.responses}
        assert by_command["get_state"]["id"] == deep_id and by_command["get_state"]["success"] is True
        assert by_command["no_such"]["id"] == deep_id
        assert (await c.get_state())["isStreaming"] is False


async def test_a_line_is_utf8_or_a_parse_error_naming_the_byte() -> None:
    """Lines are UTF-8 (a BOM is skipped). A surrogate encoded in UTF-8 bytes, or JSON in UTF-16,
    is a parse error that names the UTF-8 decoder and the byte, not a lone surrogate let into the
    session nor a UTF-16 guess; nothing of such a line takes effect."""
    utf16 = json.dumps({"type": "set_session_name", "name": "sixteen", "id": "u16"}).encode("utf-16")  # FF FE first
    decoder = "Failed to parse command: 'utf-8' codec can't decode"
    bad = {  # line -> its error
        b'{"type":"set_session_name","name":"a\xed\xa0\x80b","id":"sur"}': (
            f"{decoder} byte 0xed in position 36: invalid continuation byte"
        ),
        utf16: f"{decoder} byte 0xff in position 0: invalid start byte",
        b'{"type":"set_session_name","name":"cut \xe2\x82","id":"cut"}': (
            f"{decoder} bytes in position 39-40: invalid continuation byte"
        ),
    }
    async with start_host("--no-session") as host:
        c = host.client
        for line in bad:
            await c.send_raw(line + b"\n")
        await c.send_raw(b'\xef\xbb\xbf{"type":"set_session_name","name":"after a BOM","id":"bom"}\n')
        await _wait_for_answers(c, len(bad) + 1, 10)
        errors = [r["error"] for r in c.responses if r["command"] == "parse"]
        assert errors == list(bad.values())
        assert [r["id"] for r in c.responses if r["command"] == "set_session_name"] == ["bom"]
        assert (await c.get_state())["sessionName"] == "after a BOM"
        host.assert_protocol_lines()


def _hostile_lines() -> list[bytes]:
    """300 lines, each owed exactly one response."""
    kinds: list[bytes] = [
        b"{not json",
        b'{"type":"get_state"',  # cut short
        b"\xff\xfe\xc0\xaf invalid utf-8",
        b'"just a string"',
        b"42",
        b"null",
        b"[]",
        b'{"type":"get_state","id":"ok"}',
        b'{"type":"get_state","id":"crlf"}\r',
        b'{"type":"nope","id":1}',
        b'{"id":"no type"}',
        b'{"type":123}',
        b'{"type":["a"],"id":2}',
        b'{"type":"set_session_name","name":5}',
        b'{"type":"set_steering_mode","mode":"sideways"}',
        b'{"type":"set_thinking_level","level":{"deep":true}}',
        b'{"type":"get_entries","limit":"many"}',
        b'{"type":"switch_session","sessionPath":"../../etc/passwd"}',
        b'{"type":"delete_session","sessionId":"../x"}',
        b'{"type":"abort_bash","requestId":[]}',
        b'{"type":"extension_ui_response_typo","id":"u"}',
        b'{"type":"get_state","id":"nul \\u0000 in a string"}',
        b'{"type":"get_state","id":"raw nul \x00"}',  # a raw control character: invalid JSON
        '{"type":"set_session_name","name":"a\u2028b\u2029c","id":"sep"}'.encode(),
        b'{"type":"get_state","id":1e999}',
        b'{"type":"get_state","id":' + b'"' + b"i" * 100_000 + b'"}',
        b'{"type":"' + b"t" * 1_000_000 + b'"}',
        _deep_array(DEEP),
        _deep_object(DEEP),
        b"[" * 900 + b"]" * 900,  # decodable, not an object
    ]
    lines = [kinds[i % len(kinds)] for i in range(298)]
    lines.append(json.dumps({"type": "set_session_name", "name": "x" * (50 * 1024 * 1024)}).encode())
    lines.append(b'{"type":"get_state","id":"last"}')
    return lines


async def test_300_mixed_hostile_lines_get_300_answers_and_no_death(tmp_path: Path) -> None:
    lines = _hostile_lines()
    assert len(lines) == 300
    err = (tmp_path / "stderr.txt").open("wb")
    async with start_host("--no-session", stderr=err.fileno()) as host:
        c = host.client
        await c.send_raw(b"\n".join(lines) + b"\n")
        await _wait_for_answers(c, 300, 90)
        await asyncio.sleep(0.3)
        assert len(c.responses) == 300  # one each: none twice
        assert c.proc is not None and c.proc.returncode is None
        state = await c.get_state()
        assert state["isStreaming"] is False
        assert sum(r["command"] == "parse" for r in c.responses) >= 6 * (298 // 30)
        long_type = [r for r in c.responses if r["command"].startswith("ttt")]
        assert long_type and all(len(r["error"]) < 300 for r in long_type)  # not echoed whole
        host.assert_protocol_lines()
    err.close()
    stderr = (tmp_path / "stderr.txt").read_text()
    assert "Traceback" not in stderr and "never retrieved" not in stderr, stderr[-2000:]
