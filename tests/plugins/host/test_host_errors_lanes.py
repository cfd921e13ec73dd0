"""The error contract and the two scheduling lanes, against the real host subprocess (semantics §1)."""

from __future__ import annotations

import asyncio


async def test_error_contract_and_host_keeps_serving(rpc_host) -> None:
    async with rpc_host() as host:
        c = host.client
        await c.send_raw(b"{not json\n")
        parse = await _next_response(c, lambda r: r["command"] == "parse")
        assert parse["success"] is False and "id" not in parse
        assert parse["error"].startswith("Failed to parse command: ")

        unknown = await c.request({"type": "no_such_thing", "id": "u1"})
        assert unknown == {
            "id": "u1",
            "type": "response",
            "command": "no_such_thing",
            "success": False,
            "error": "Unknown command: no_such_thing",
        }
        numeric = await c.request({"type": "context_compact", "id": 42})
        assert numeric["id"] == 42 and numeric["error"] == "Unknown command: context_compact"

        await c.send_raw(b'{"id":"nt","message":"hi"}\n')
        missing_type = await _next_response(c, lambda r: r.get("id") == "nt")
        assert missing_type["success"] is False and missing_type["command"] == "unknown"
        assert missing_type["error"] == "Unknown command: undefined"

        # Missing and ill-typed required fields name the field.
        no_name = await c.request({"type": "set_session_name", "id": "f1"})
        assert no_name["success"] is False and no_name["command"] == "set_session_name"
        assert "name" in no_name["error"]
        bad_type = await c.request({"type": "set_auto_retry", "enabled": "yes please", "id": "f2"})
        assert bad_type["success"] is False and "enabled" in bad_type["error"]

        # An exception inside a handler: success:false with its message.
        empty = await c.request({"type": "set_session_name", "name": "  ", "id": "h1"})
        assert empty["success"] is False and empty["error"] == "Session name cannot be empty"
        no_model = await c.request({"type": "set_model", "provider": "nope", "modelId": "m", "id": "h2"})
        assert no_model["error"] == "Model not found: nope/m"
        no_entry = await c.request({"type": "set_label", "entryId": "zzz", "label": "x", "id": "h3"})
        assert no_entry["error"] == "Entry zzz not found"

        # A feature that is not built answers honestly.
        compact = await c.request({"type": "compact", "id": "cp"})
        assert compact["success"] is False and compact["command"] == "compact" and compact["error"]

        state = await c.request({"type": "get_state", "id": "final"})
        assert state["success"] is True
        # Exactly one response per request line.
        ids = [r.get("id") for r in c.responses if r.get("id") is not None]
        assert len(ids) == len(set(ids))


async def test_ordinary_lane_answers_in_arrival_order(rpc_host) -> None:
    async with rpc_host() as host:
        c = host.client
        batch = b""
        expected = []
        for i in range(30):
            kind = ("get_state", "get_session_stats", "get_tools", "get_commands", "get_messages")[i % 5]
            batch += f'{{"type":"{kind}","id":"o{i}"}}\n'.encode()
            expected.append(f"o{i}")
        batch += b'{"type":"set_session_name","name":"n1","id":"s1"}\n{"type":"get_state","id":"s2"}\n'
        await c.send_raw(batch)
        await _next_response(c, lambda r: r.get("id") == "s2")
        assert [r["id"] for r in c.responses] == [*expected, "s1", "s2"]
        assert c.responses[-1]["data"]["sessionName"] == "n1"  # s1 finished before s2 started


async def test_concurrent_lane_answers_while_ordinary_work_runs(rpc_host) -> None:
    async with rpc_host() as host:
        c = host.client
        # A long direct bash (concurrent lane) does not hold the ordinary lane.
        bash = asyncio.create_task(c.request({"type": "bash", "command": "sleep 3; echo done", "id": "b"}))
        await asyncio.sleep(0.2)
        state = await c.request({"type": "get_state", "id": "during-bash"}, timeout=2.5)
        assert state["success"] and not bash.done()
        assert (await bash)["data"]["output"].strip() == "done"

        # While a prompt runs (reply delayed), clear_queue answers at once.
        host.faux.push({"content": [{"type": "text", "text": "slow"}], "delayMs": 3000})
        await c.prompt("go")
        await c.wait_for_event("agent_start")
        cleared = await c.request({"type": "clear_queue", "id": "cq"}, timeout=2.5)
        assert cleared["success"]
        assert not any(e["type"] == "agent_end" for e in c.events)  # the run is still going
        busy = await c.request({"type": "prompt", "message": "again", "id": "busy"})
        assert busy["error"] == (
            "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
        )
        aborted = await c.request({"type": "abort", "id": "ab"}, timeout=3)
        assert aborted["success"]
        await c.wait_for_idle()
        assert (await c.request({"type": "get_state", "id": "end"}))["data"]["isStreaming"] is False


async def _next_response(c, check, timeout: float = 5.0) -> dict:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        for r in c.responses:
            if check(r):
                return r
        await asyncio.sleep(0.02)
    raise TimeoutError("no matching response")
