"""Not JSON in, not JSON out, through the real host: ``NaN``, ``Infinity`` and ``-Infinity`` in a
command (even as the very first line after spawn, before the warm-up thread loaded the fast
encoder) are a parse error; a number out of a double's range (``1e400``, valid JSON) is read as
JavaScript reads it and its echo is ``null``, the same text before and after the warm-up; and no
record on stdout ever carries a non-JSON constant, whatever a plugin puts in an event."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from atomic_host.core.jsonfast import loads_strict
from atomic_host.kit import _fast
from atomic_host.testing import Host, start_host

CONSTANTS = ["NaN", "Infinity", "-Infinity"]
OUT_OF_RANGE = ["1e400", "-1e400", "1E+400", "123456789e99999", "-2e308"]


def _line(kind: str, where: str, token: str) -> bytes:
    """A command line with ``token`` (raw JSON text) as its id, a field value or deep in a field."""
    if where == "id":
        return f'{{"type":"{kind}","id":{token}}}\n'.encode()
    if where == "field":
        return f'{{"type":"{kind}","name":{token},"id":"x"}}\n'.encode()
    return f'{{"type":"{kind}","id":"x","extra":[{{"a":[1,{token}]}}]}}\n'.encode()


async def _next_response(host: Host, seen: int) -> str:
    """The first response line after the first ``seen`` responses, as the host wrote it."""
    c = host.client
    deadline = asyncio.get_running_loop().time() + 20
    while len(c.responses) <= seen:
        assert asyncio.get_running_loop().time() < deadline, "no response"
        await asyncio.sleep(0.01)
    target = c.responses[seen]
    return next(line for line in reversed(list(c.lines)) if json.loads(line) == target)


async def _warmed_up(host: Host) -> None:
    """Wait for the fast encoder: it writes the id 1e-7 as ``1e-7``, the standard one as ``1e-07``
    (``ATOMIC_PLAIN=1``: there is only the standard one)."""
    if _fast.PLAIN:
        return
    for _ in range(300):
        seen = len(host.client.responses)
        await host.client.send_raw(b'{"type":"get_state","id":1e-7}\n')
        if '"id":1e-7,' in await _next_response(host, seen):
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the warm-up never loaded the fast encoder")


@settings(max_examples=12, suppress_health_check=[HealthCheck.too_slow], phases=[Phase.explicit, Phase.generate])
@given(
    token=st.sampled_from(CONSTANTS + OUT_OF_RANGE),
    kind=st.sampled_from(["get_state", "set_session_name", "no_such_command"]),
    where=st.sampled_from(["id", "field", "nested"]),
)
def test_non_json_numbers_as_the_first_line_after_spawn(token: str, kind: str, where: str) -> None:
    async def scenario() -> None:
        async with start_host("--no-session") as host:
            line = _line(kind, where, token)
            await host.client.send_raw(line)  # the first line: nothing warmed up yet
            first = await _next_response(host, 0)
            response = loads_strict(first)  # strict JSON, whatever came in
            if token in CONSTANTS:
                assert response == {
                    "type": "response", "command": "parse", "success": False,
                    "error": f"Failed to parse command: {token} is not JSON (JSON has no NaN or Infinity)",
                }  # fmt: skip
            else:
                assert response["command"] == kind
                assert response["id"] == (None if where == "id" else "x")
            await _warmed_up(host)
            seen = len(host.client.responses)
            await host.client.send_raw(line)
            after = await _next_response(host, seen)
            if kind == "get_state" and response["success"]:  # its data (timestamps, counts) may move on
                first, after = json.loads(first), json.loads(after)
                first.pop("data"), after.pop("data")
            assert after == first  # one encoder semantics from the first line on
            assert (await host.client.get_state())["sessionId"]  # and the host serves on
            host.assert_protocol_lines()

    asyncio.run(scenario())


async def test_a_plugins_nan_reaches_no_client_as_nan() -> None:
    ext = str(Path(__file__).with_name("rpch_nan_ext.py"))
    async with start_host("-e", ext) as host:
        host.faux.tool_call("nan_stats", {})
        host.faux.push("done")
        result = await host.client.prompt_and_wait("stats please", timeout=30)
        assert result.ok
        end = next(e for e in result if e["type"] == "tool_execution_end")
        assert end["result"]["details"] == {"mean": None, "max": None, "min": None, "rows": [1.5, None]}
        messages: list[dict[str, Any]] = (await host.client.get_messages()).messages
        tool_result = next(m for m in messages if m["role"] == "toolResult")
        assert tool_result["details"]["rows"] == [1.5, None]
        for line in host.client.lines:
            loads_strict(line)
        host.assert_protocol_lines()
