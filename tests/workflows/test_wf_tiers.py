"""Model tiers: a stage whose first tier answers 401 runs again on the next tier (a real SSE
server, two providers of models.json); when every tier fails the run is ``failed`` with the error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from wf_helpers import QUIET, answer_reply, error_reply, sse, two_providers, wait_run, write_workflow

from atomic_host.testing import start_host

pytestmark = pytest.mark.slow  # DBOS launched in each host

TIERED = """\
[[stages]]
name = "only"
prompt = "Answer: {input}"
models = ["main/m-main", "backup/m-backup"]
"""


async def test_a_401_moves_the_stage_to_the_next_tier(tmp_path: Path) -> None:
    with sse.SSEServer() as server:
        two_providers(tmp_path / "agent", server.base_url)
        write_workflow(tmp_path / "agent" / "workflows", "tiered", TIERED)
        server.enqueue(error_reply(401, "http_401_authentication.json"))
        server.enqueue(answer_reply())
        async with start_host(base=tmp_path, settings=QUIET) as host:
            c = host.client
            mark = len(c.events)
            await c.call("prompt", message="/workflow tiered hi")
            ended = await wait_run(c, "completed", after=mark)
            assert [r.body["model"] for r in server.requests] == ["m-main", "m-backup"]
            detail = await c.call("get_workflow_run_summary", runId=ended["runId"])
            (stage,) = detail["stages"]
            assert stage["status"] == "completed" and stage["model"] == "backup/m-backup"
            first, second = stage["attempts"]
            assert first["model"] == "main/m-main" and first["stopReason"] == "error"
            assert "401" in first["errorMessage"] or "auth" in first["errorMessage"].lower()
            assert second == {"model": "backup/m-backup", "stopReason": "stop", "sessionFile": stage["sessionFile"]}
            assert detail["output"] == "All done."
            host.assert_protocol_lines()


async def test_when_every_tier_fails_the_run_fails_with_the_error(tmp_path: Path) -> None:
    with sse.SSEServer() as server:
        two_providers(tmp_path / "agent", server.base_url)
        write_workflow(tmp_path / "agent" / "workflows", "tiered", TIERED)
        server.enqueue(error_reply(401, "http_401_authentication.json"))
        server.enqueue(error_reply(401, "http_401_authentication.json"))
        async with start_host(base=tmp_path, settings=QUIET) as host:
            c = host.client
            mark = len(c.events)
            await c.call("prompt", message="/workflow tiered hi")
            ended = await wait_run(c, "failed", after=mark)
            detail = await c.call("get_workflow_run_summary", runId=ended["runId"])
            assert detail["status"] == "failed" and detail["stages"][0]["status"] == "failed"
            assert detail["error"] == detail["stages"][0]["errorMessage"]
            assert len(server.requests) == 2
            final = await c.wait_for_event(
                lambda e: e.get("type") == "message_end" and e["message"].get("customType") == "workflow", after=mark
            )
            assert final["message"]["content"].startswith("Workflow tiered failed at stage only: ")


async def test_an_unresolved_overflow_moves_the_stage_to_the_next_tier(tmp_path: Path) -> None:
    """The first tier overflows, compaction cannot fix it (``compaction_end`` with
    ``unresolvedOverflow: true``, inside the stage's session): the stage runs on the next tier."""
    with sse.SSEServer() as server:
        two_providers(tmp_path / "agent", server.base_url)
        write_workflow(tmp_path / "agent" / "workflows", "tiered", TIERED)
        server.enqueue(error_reply(400, "http_400_prompt_too_long.json"))  # the stage, tier 1
        # (compaction of the one-message stage session asks no model: its retry overflows again)
        server.enqueue(error_reply(400, "http_400_prompt_too_long.json"))
        server.enqueue(answer_reply())  # tier 2
        async with start_host(base=tmp_path, settings=QUIET) as host:
            c = host.client
            mark = len(c.events)
            await c.call("prompt", message="/workflow tiered hi")
            ended = await wait_run(c, "completed", after=mark)
            assert [r.body["model"] for r in server.requests] == ["m-main", "m-main", "m-backup"]
            detail = await c.call("get_workflow_run_summary", runId=ended["runId"])
            (stage,) = detail["stages"]
            assert stage["status"] == "completed" and stage["model"] == "backup/m-backup"
            first, second = stage["attempts"]
            assert first["model"] == "main/m-main" and first["stopReason"] == "error"
            assert first["unresolvedOverflow"] is True
            with open(first["sessionFile"], encoding="utf-8") as fh:  # compaction ran in the stage's session
                kinds = [json.loads(line).get("type") for line in fh]
            assert "compaction" in kinds
            assert second == {"model": "backup/m-backup", "stopReason": "stop", "sessionFile": stage["sessionFile"]}
            assert detail["output"] == "All done."
            assert not [e for e in c.events if e.get("type") == "compaction_end"]  # stage events stay inside
            host.assert_protocol_lines()
