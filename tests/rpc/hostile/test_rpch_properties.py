"""Property-based tests of the RPC transport and of every command (hypothesis): random framing
(chunk boundaries, CR/LF, U+2028, NUL, invalid UTF-8) and random, wrong-typed field values for
every command of the protocol union. Each line gets exactly one response, stdout stays valid
protocol JSON, and the host stays alive."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atomic_host.core.protocol.commands import COMMANDS
from atomic_host.frontends.rpc.io import LineProtocol, decode_line
from atomic_host.testing import start_host

pytestmark = pytest.mark.slow  # hypothesis through the real host

line_bytes = st.binary(max_size=300).map(lambda b: b.replace(b"\n", b"")) | st.text(max_size=100).map(
    lambda t: t.replace("\n", "").encode("utf-8", "surrogatepass")
)


@settings(max_examples=300)
@given(
    lines=st.lists(line_bytes, max_size=30),
    crlf=st.lists(st.booleans(), min_size=30, max_size=30),
    cuts=st.lists(st.integers(0, 10_000), max_size=40),
    final_newline=st.booleans(),
)
def test_framing_gives_back_every_line_whatever_the_chunks(
    lines: list[bytes], crlf: list[bool], cuts: list[int], final_newline: bool
) -> None:
    """LF frames, one trailing CR is dropped, nothing else (U+2028, NUL, lone CR, invalid UTF-8) splits."""
    last = len(lines) - 1
    wire = b"".join(
        line + (b"" if i == last and not final_newline else b"\r\n" if crlf[i] else b"\n")
        for i, line in enumerate(lines)
    )
    queue: asyncio.Queue[bytes | None] = asyncio.Queue()
    proto = LineProtocol(queue)
    points = sorted({c % (len(wire) + 1) for c in cuts} | {0, len(wire)})
    for a, b in itertools.pairwise(points):
        proto.data_received(wire[a:b])
    proto.eof_received()
    got = []
    while (item := queue.get_nowait()) is not None:
        got.append(item)

    def one_cr_less(line: bytes) -> bytes:
        return line[:-1] if line.endswith(b"\r") else line

    expected = []
    for i, line in enumerate(lines):
        if i == last and not final_newline:  # unterminated at EOF: delivered unless empty
            if line:
                expected.append(one_cr_less(line))
        else:  # the CR of a CRLF terminator is the one CR dropped
            expected.append(line if crlf[i] else one_cr_less(line))
    assert got == expected


hostile_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    names=st.lists(hostile_text, min_size=1, max_size=12),
    ascii_=st.booleans(),
    crlf=st.booleans(),
    chunk=st.integers(1, 97),
)
def test_random_framing_through_the_subprocess(names: list[str], ascii_: bool, crlf: bool, chunk: int) -> None:
    """Commands whose strings hold anything but surrogates, split into arbitrary chunks: answered
    once each, in order, and the last name set arrives unchanged."""

    async def scenario() -> None:
        async with start_host("--no-session") as host:
            c = host.client
            end = b"\r\n" if crlf else b"\n"
            wire = b""
            for i, name in enumerate(names):
                cmd = {"type": "set_session_name", "name": name or "-", "id": f"n{i}:{name}"}
                wire += json.dumps(cmd, ensure_ascii=ascii_).encode() + end
            for i in range(0, len(wire), chunk):
                await c.send_raw(wire[i : i + chunk])
            state = await c.get_state()
            answered = [r["id"] for r in c.responses if r["command"] == "set_session_name"]
            assert answered == [f"n{i}:{name}" for i, name in enumerate(names)]
            empty = [r for r in c.responses if r["command"] == "set_session_name" and not r["success"]]
            assert all(r["id"].startswith("n") for r in empty)
            if names[-1].strip():  # names are trimmed (semantics §4); an empty one is refused
                assert state["sessionName"] == names[-1].strip()
            host.assert_protocol_lines()

    asyncio.run(scenario())


def _wire_fields(command: str) -> list[str]:
    model = COMMANDS[command]
    return [f.alias or name for name, f in model.model_fields.items() if name not in ("type", "id")]


SAFE_PATHS = st.sampled_from(["", ".", "..", "../x", "a/../../b", "x\x00y", "no-such.jsonl", "s" * 5000, "~", "*"])
# json.dumps writes an infinite float as `Infinity`, which is not JSON (a parse error without an id:
# test_rpch_nonjson.py sends those); the values here are JSON.
json_floats = st.floats(allow_nan=False, allow_infinity=False)
json_scalars = st.none() | st.booleans() | st.integers() | json_floats | hostile_text
json_values = st.recursive(
    json_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(hostile_text, inner, max_size=3),
    max_leaves=10,
)  # fmt: skip


def _value_for(command: str, field: str) -> st.SearchStrategy[Any]:
    if field.endswith(("Path", "Directory", "Override")):  # never a real path outside the sandbox
        return SAFE_PATHS | st.integers() | st.lists(st.integers(), max_size=2)
    if command in ("bash", "user_bash") and field == "command":  # no random shell programs
        return st.sampled_from(["true", "echo hi", ""]) | st.integers() | st.none() | st.lists(st.text(), max_size=2)
    return json_values


ANSWERED = sorted(set(COMMANDS) - {"extension_ui_response"})  # UI responses are never answered (§1)


@st.composite
def command_lines(draw: st.DrawFn) -> list[dict[str, Any]]:
    out = []
    for i, name in enumerate(draw(st.permutations(ANSWERED))):
        cmd: dict[str, Any] = {"type": name, "id": f"f{i}"}
        for field in _wire_fields(name):
            if draw(st.booleans()):
                cmd[field] = draw(_value_for(name, field))
        out.append(cmd)
    return out


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(commands=command_lines())
def test_every_command_with_random_fields_gets_exactly_one_response(commands: list[dict[str, Any]]) -> None:
    async def scenario() -> None:
        async with start_host() as host:
            c = host.client
            for cmd in commands:
                await c.send_raw(json.dumps(cmd).encode() + b"\n")
            deadline = asyncio.get_running_loop().time() + 60
            while len({r.get("id") for r in c.responses}) < len(commands):
                assert asyncio.get_running_loop().time() < deadline, sorted(
                    {cmd["id"] for cmd in commands} - {r.get("id") for r in c.responses}
                )
                await asyncio.sleep(0.05)
            await c.call("abort")
            await c.call("abort_compaction")
            state = await c.get_state()
            assert isinstance(state["isStreaming"], bool)
            await asyncio.sleep(0.2)
            by_id: dict[str, list[dict[str, Any]]] = {}
            for r in c.responses:
                by_id.setdefault(r.get("id"), []).append(r)
            for cmd in commands:
                (response,) = by_id[cmd["id"]]
                assert response["command"] == cmd["type"]
                if not response["success"]:
                    assert isinstance(response["error"], str) and response["error"]
            host.assert_protocol_lines()

    asyncio.run(scenario())


@settings(max_examples=500)
@given(data=st.binary(max_size=64) | st.text(max_size=32).map(lambda t: t.encode("utf-8", "surrogatepass")),
       bom=st.booleans())  # fmt: skip
def test_a_line_decodes_as_utf8_with_one_bom_skipped(data: bytes, bom: bool) -> None:
    """``decode_line`` is the ``utf-8-sig`` codec's reading (one leading BOM skipped, surrogates
    and every other invalid sequence refused) without loading that codec."""
    line = (b"\xef\xbb\xbf" if bom else b"") + data
    try:
        expected: str | None = line.decode("utf-8-sig")
    except UnicodeDecodeError:
        expected = None
    try:
        got: str | None = decode_line(line)
    except UnicodeDecodeError:
        got = None
    assert got == expected
