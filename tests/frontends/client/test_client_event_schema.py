"""Every event of the protocol's scenarios (a streamed reply with thinking and a tool call, shell
commands, queues, compaction, retries, model and thinking changes, session names, extension UI and
errors) parses into its typed client record, every property of which reads back the declared type,
and matches the committed JSON Schema: the two come from the same models."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from suite_paths import ROOT as ROOT_DIR

from atomic_host.client import parse_event, types
from atomic_host.testing import check_typed, start_host

SCHEMA = json.loads((ROOT_DIR / "docs" / "protocol.schema.json").read_text())
EVENT_SCHEMA = Draft202012Validator({"$ref": "#/$defs/Event", "$defs": SCHEMA["$defs"]})
EXT = str(Path(__file__).with_name("client_events_ext.py"))
OVERLOADED = {"content": [], "stopReason": "error", "errorMessage": "529 overloaded_error"}
SETTINGS = {"retry": {"enabled": True, "maxRetries": 2, "baseDelayMs": 20}, "sessionSummary": {"enabled": False}}


async def _scenarios(host: Any) -> None:
    c = host.client
    call = {"type": "toolCall", "name": "bash", "arguments": {"command": "echo hi; echo err >&2"}}
    thinking, text = {"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "let me look"}
    host.faux.push({"content": [thinking, text, call]})
    host.faux.push("it said hi")
    await c.run("look")
    await c.bash("echo direct")
    host.faux.push({"content": "slow " * 30, "chunkDelayMs": 20}, "steered", "followed")
    start = len(c.events)
    await c.prompt("long one")
    await c.wait_for_event("message_update", after=start)
    await c.steer("steer now")
    await c.follow_up("and then")
    await c.wait_for_idle(after=start)
    host.faux.push(OVERLOADED, "recovered")
    await c.run("retry me")
    host.faux.push("1,2")
    await c.compact()
    await c.set_thinking_level("low")
    await c.set_session_name("schema scenarios")
    models = await c.get_available_models()
    await c.set_model(models.models[-1].provider, models.models[-1].id)
    await c.run("/notify")
    await c.run("/boom")
    await asyncio.sleep(0.1)


async def test_every_scenario_event_is_typed_and_matches_the_schema() -> None:
    async with start_host("-e", EXT, settings=SETTINGS) as host:
        await _scenarios(host)
        events = list(host.client.events)
    kinds = set()
    for raw in events:
        errors = sorted(EVENT_SCHEMA.iter_errors(raw), key=str)
        assert not errors, f"{raw['type']}: {errors[0].message}"
        event = parse_event(raw)
        assert type(event) is types.EVENT_TYPES[raw["type"]]
        check_typed(event)
        kinds.add(raw["type"])
        if isinstance(event, types.MessageUpdateEvent):
            kinds.add("delta:" + event.assistant_message_event.type)
    expected = {
        "agent_start", "agent_end", "agent_settled", "turn_start", "turn_end", "message_start", "message_update",
        "message_end", "tool_execution_start", "tool_execution_update", "tool_execution_end",
        "bash_execution_update", "queue_update", "compaction_start", "compaction_end", "auto_retry_start",
        "auto_retry_end", "thinking_level_changed", "session_info_changed", "model_changed", "extension_ui_request",
        "extension_error", "delta:thinking_delta", "delta:text_delta", "delta:toolcall_end",
    }  # fmt: skip
    assert expected <= kinds, sorted(expected - kinds)
