"""A run's final message reaches its owner session exactly once. The run ends while the owner
session streams (its message waits for the run to end), and the host is SIGKILLed before that:
after a restart, ``start_pending_recovery`` appends it without starting a turn and counts it
(``completions``); repeated, in the same process or the next, it appends nothing again."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

from wf_helpers import QUIET, _until, header_of, of_type, wait_run, write_workflow

from atomic_host.testing import start_host

ONE_STAGE = """\
[[stages]]
name = "only"
prompt = "Answer: {input}"
"""


def dbos_status(db: Path, run_id: str) -> str | None:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        row = conn.execute("select status from workflow_status where workflow_uuid = ?", (run_id,)).fetchone()
    return row[0] if row else None


def workflow_messages(agent_dir: Path) -> list[dict[str, Any]]:
    files = [p for p in (agent_dir / "sessions").rglob("*.jsonl") if not header_of(str(p)).get("internal")]
    (path,) = files  # the owner session (the stage's session is internal)
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]]
    return [e for e in entries if e.get("type") == "custom_message" and e.get("customType") == "workflow"]


async def test_the_final_message_lost_in_a_crash_is_appended_once_by_recovery(tmp_path: Path) -> None:
    write_workflow(tmp_path / "agent" / "workflows", "one", ONE_STAGE)
    agent_dir = tmp_path / "agent"
    async with start_host(base=tmp_path, settings=QUIET) as host:
        c = host.client
        host.faux.push("hello there")
        assert (await c.prompt_and_wait("hi")).ok
        host.faux.push({"content": "never sent", "delayMs": 60000}, "the stage answer")
        await c.call("prompt", message="a long one")
        await _until(lambda: len(host.faux_calls()) == 2)  # the owner session streams
        mark = len(c.events)
        assert (await c.call("prompt", message="/workflow one x"))["disposition"] == "handled"
        ended = await wait_run(c, "completed", after=mark)
        await _until(lambda: dbos_status(agent_dir / "workflows.sqlite", ended["runId"]) == "SUCCESS")
        assert (await c.get_state())["isStreaming"] is True
        assert workflow_messages(agent_dir) == []  # waiting for the owner's run to end
        assert c.proc is not None
        c.proc.kill()
        await c.proc.wait()
    for attempt in range(2):
        async with start_host("--continue", base=tmp_path, settings=QUIET) as host:
            c = host.client
            runs = (await c.call("list_workflow_runs"))["runs"]
            assert [(r["runId"], r["status"]) for r in runs] == [(ended["runId"], "completed")]
            mark = len(c.events)
            report = await c.call("start_pending_recovery")
            assert report == {"replayed": 0, "dropped": 0, "completions": 1 - attempt, "notices": []}
            assert await c.call("start_pending_recovery") == report
            await asyncio.sleep(0.3)
            events = c.events[mark:]
            assert not of_type(events, "agent_start")  # appended, no turn
            appended = [e["message"] for e in of_type(events, "message_end")]
            if attempt == 0:
                (message,) = appended
                assert message["customType"] == "workflow"
                assert message["content"] == "Workflow one finished.\n\nthe stage answer"
                assert message["details"] == {"runId": ended["runId"], "name": "one", "status": "completed"}
            else:
                assert appended == []
            in_context = [m for m in (await c.get_messages()).messages if m.get("customType") == "workflow"]
            assert len(in_context) == 1
            host.assert_protocol_lines()
        assert len(workflow_messages(agent_dir)) == 1
