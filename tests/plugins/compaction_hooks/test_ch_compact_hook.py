"""The ``compact`` hook through the real host: a plugin file replaces the built-in strategy, hands
over to it, fails it; ``session_before_compact`` takes typed results only; blocking the built-in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from atomic_host.testing import Host, read_jsonl, start_host

LONG_PROMPT = "\n".join(f"requirement {i}: keep the widget number {i} working" for i in range(1, 31))
BIG = {"input": 120000, "output": 10}  # past faux-1's threshold (128000 - 16384)

REPLACEMENT = '''
import json
from pathlib import Path
from atomic_host import hookimpl
from atomic_host.contract.results import Compaction, Failure

MODE = Path(__file__).with_suffix(".mode")
SEEN = Path(__file__).with_suffix(".seen.jsonl")


@hookimpl
async def compact(event, api):
    mode = MODE.read_text() if MODE.exists() else "replace"
    with SEEN.open("a") as fh:
        fh.write(json.dumps({"reason": event.reason, "entries": len(event.branch_entries),
                             "tokens": event.tokens_before, "window": event.context_window,
                             "requesters": [r.model["id"] for r in event.requesters]}) + "\\n")
    if mode == "pass":
        return None
    if mode == "fail":
        return Failure("the plugin's summariser is down")
    users = [e["message"] for e in event.branch_entries
             if e.get("type") == "message" and e["message"]["role"] == "user"]
    text = f"[User]: plugin summary of {len(users)} prompts ({event.reason})"
    keep = event.branch_entries[-1]["id"]
    return Compaction(text, first_kept_entry_id=keep, rung="plugin", details={"plugin": "replacement"},
                      entry={"byPlugin": True})
'''


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e.get("type") == kind]


async def seed(host: Host) -> None:
    """Two user turns; the first prompt has 30 lines, so the built-in has a region to compact."""
    host.faux.push("first answer")
    await host.client.prompt_and_wait(LONG_PROMPT)
    host.faux.push("second answer")
    await host.client.prompt_and_wait("now the second thing")


def session_entries(host: Host) -> list[dict[str, Any]]:
    [path] = list((host.agent_dir / "sessions").rglob("*.jsonl"))
    return read_jsonl(path)[1:]


def write_plugin(tmp_path: Path, source: str, name: str = "replacement.py") -> Path:
    path = tmp_path / name
    path.write_text(source)
    return path


async def test_a_plugin_compact_replaces_the_strategy_for_manual_and_threshold(tmp_path: Path) -> None:
    ext = write_plugin(tmp_path, REPLACEMENT)
    async with start_host("--extension", str(ext)) as host:
        c = host.client
        await seed(host)
        calls = len(host.faux_calls())
        start = len(c.events)
        result = await c.call("compact")
        assert len(host.faux_calls()) == calls  # the built-in never asked the model
        assert result["compactedText"] == "[User]: plugin summary of 2 prompts (manual)"
        assert result["rung"] == "plugin" and result["tokensBefore"] > 0 and result["promptVersion"] == 0
        # what the plugin left out the host filled in: the settings' parameters, stats of the text
        assert result["parameters"] == {"compression_ratio": 0.5, "preserve_recent": 2,
                                        "query": "the latest user request"}  # fmt: skip
        assert result["stats"]["linesBefore"] == result["stats"]["linesKept"] == 1
        assert result["stats"]["linesDeleted"] == 0 and result["stats"]["tokensBefore"] == result["tokensBefore"]
        assert result["backupPath"].endswith(".compact.bak") and Path(result["backupPath"]).is_file()
        [end] = of_type(c.events[start:], "compaction_end")
        assert end["result"] == result and end["aborted"] is False and "errorMessage" not in end
        entry = session_entries(host)[-1]
        assert entry["type"] == "compaction" and entry["byPlugin"] is True
        assert entry["summary"] == result["compactedText"]
        assert entry["details"]["strategy"] == "verbatim-lines" and entry["details"]["plugin"] == "replacement"
        assert entry["firstKeptEntryId"] == result["firstKeptEntryId"]
        # the boundary is the context now: the plugin's text, then the kept tail
        messages = (await c.get_messages()).messages
        assert "plugin summary of 2 prompts (manual)" in messages[0]["content"][0]["text"]

        # threshold compaction after a run uses the plugin too
        host.faux.push({"content": "big answer", "usage": BIG})
        events = await c.prompt_and_wait("third")
        assert [e["type"] for e in events][-4:] == ["agent_end", "compaction_start", "compaction_end",
                                                     "agent_settled"]  # fmt: skip
        end = events[-2]
        assert end["reason"] == "threshold"
        assert end["result"]["compactedText"].startswith("[User]: plugin summary of ")
        assert end["result"]["compactedText"].endswith("(threshold)")
        assert end["result"]["backupPath"].endswith(".auto-compact.bak")
        seen = [json.loads(line) for line in ext.with_suffix(".seen.jsonl").read_text().splitlines()]
        assert [s["reason"] for s in seen] == ["manual", "threshold"]
        assert seen[0]["requesters"] == ["faux-1"] and seen[0]["window"] == 128000
        host.assert_protocol_lines()


async def test_none_hands_over_to_the_builtin_and_failure_fails_it(tmp_path: Path) -> None:
    ext = write_plugin(tmp_path, REPLACEMENT)
    mode = ext.with_suffix(".mode")
    async with start_host("--extension", str(ext)) as host:
        c = host.client
        await seed(host)
        mode.write_text("pass")
        host.faux.push("1,5")
        result = await c.call("compact")
        assert result["rung"] == "planned" and "(filtered 5 lines)" in result["compactedText"]

        mode.write_text("fail")
        start = len(c.events)
        response = await c.request({"type": "compact"})
        assert (response["success"], response["error"]) == (False, "Compaction failed: the plugin's summariser is down")
        [end] = of_type(c.events[start:], "compaction_end")
        assert end["result"] is None and end["errorMessage"] == response["error"]
        assert len(of_type(session_entries(host), "compaction")) == 1
        host.assert_protocol_lines()


DICT_BEFORE_COMPACT = '''
from atomic_host import hookimpl


@hookimpl
def session_before_compact(event, api):
    return {"cancel": True}
'''


async def test_a_dict_from_session_before_compact_is_reported_and_ignored(tmp_path: Path) -> None:
    ext = write_plugin(tmp_path, DICT_BEFORE_COMPACT, "dict_hook.py")
    async with start_host("--extension", str(ext)) as host:
        c = host.client
        await seed(host)
        host.faux.push("1,5")
        start = len(c.events)
        result = await c.call("compact")  # not cancelled: the dict is no result
        assert result["rung"] == "planned"
        [error] = of_type(c.events[start:], "extension_error")
        assert error["extensionPath"] == str(ext.resolve()) and error["event"] == "session_before_compact"
        assert error["error"] == "returned dict; expected Cancel or CompactResult or None"
        host.assert_protocol_lines()


async def test_blocking_the_builtin_leaves_no_strategy() -> None:
    async with start_host(settings={"disabledPlugins": ["builtin_plugins.compaction"]}) as host:
        c = host.client
        await seed(host)
        start = len(c.events)
        response = await c.request({"type": "compact"})
        assert response["success"] is False
        assert response["error"].startswith("No compaction strategy: no plugin implements the compact hook")
        # automatic compaction does not start either
        host.faux.push({"content": "big answer", "usage": BIG})
        events = await c.prompt_and_wait("third")
        assert not of_type(c.events[start:], "compaction_start") and of_type(events, "agent_end")
        assert not of_type(session_entries(host), "compaction")
        host.assert_protocol_lines()


NAMED = """
from atomic_host import hookimpl
from atomic_host.contract.results import Compaction


@hookimpl
def compact(event):
    return Compaction("[User]: the named strategy's summary", first_kept_entry_id=event.branch_entries[-1]["id"],
                      details={"strategy": "my-strategy"})
"""


async def test_a_strategy_that_names_itself_still_writes_a_boundary(tmp_path: Path) -> None:
    """``details["strategy"]`` is the host's boundary kind: a strategy that puts its own name there
    keeps it as ``strategyName``, and its summary replaces the region (before, the entry was not a
    boundary: the old turns stayed in the context and the summary was dropped)."""
    async with start_host("--extension", str(write_plugin(tmp_path, NAMED, "named.py"))) as host:
        await seed(host)
        before = (await host.client.get_messages()).messages
        result = await host.client.call("compact")
        assert result["compactedText"] == "[User]: the named strategy's summary"
        entry = session_entries(host)[-1]
        assert entry["details"]["strategy"] == "verbatim-lines" and entry["details"]["strategyName"] == "my-strategy"
        messages = (await host.client.get_messages()).messages
        assert len(messages) < len(before)
        assert messages[0]["customType"] == "compaction"
        assert "the named strategy's summary" in messages[0]["content"][0]["text"]
        assert LONG_PROMPT not in json.dumps(messages)  # the first turn is gone from the context
