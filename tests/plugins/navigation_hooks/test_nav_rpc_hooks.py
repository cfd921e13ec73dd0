"""The navigation hooks through ``atomic --mode rpc`` with a real plugin file: ``session_before_tree``
cancels ``navigate_tree``, ``session_tree`` observes it, ``session_info_changed`` sees names and
labels, and the switch/fork before-hooks get typed events and only ``Cancel`` results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nav_helpers import DICT_CANCEL, RECORDER, hooks_of, read_log, write_plugin

from atomic_host.testing import Host, start_host


def _users(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in entries if e["type"] == "message" and e["message"]["role"] == "user"]


async def _two_turns(host: Host) -> list[dict[str, Any]]:
    host.faux.push("first answer", "second answer")
    await host.client.prompt_and_wait("first question")
    await host.client.prompt_and_wait("second question")
    return (await host.client.get_entries())["entries"]


async def test_session_before_tree_cancel_stops_navigate_tree(tmp_path: Path) -> None:
    plugin = write_plugin(tmp_path, "recorder", RECORDER)
    log = tmp_path / "log.jsonl"
    env = {"NAV_LOG": str(log), "NAV_CANCEL": "session_before_tree"}
    async with start_host("-e", str(plugin), env=env) as host:
        c = host.client
        entries = await _two_turns(host)
        second = _users(entries)[1]
        leaf = entries[-1]["id"]
        calls = len(host.faux_calls())
        options = {"summarize": True, "customInstructions": "Be terse.", "label": "kept"}
        response = await c.request({"type": "navigate_tree", "targetId": second["id"], "options": options})
        assert response["success"] is True and response["data"] == {"cancelled": True}, response
        after = await c.get_entries()
        assert after["leafId"] == leaf  # nothing moved
        assert [e["type"] for e in after["entries"]] == [e["type"] for e in entries]  # no summary, no label
        assert len(host.faux_calls()) == calls  # the abandoned path was not summarised
        host.assert_protocol_lines()
    (before,) = [r for r in read_log(log) if r["hook"] == "session_before_tree"]
    assert before["eventType"] == "SessionBeforeTreeEvent"
    assert before["target_id"] == second["id"]
    assert before["old_leaf_id"] == leaf
    assert before["new_leaf_id"] == second["parentId"]  # re-editing a prompt: the leaf goes to its parent
    assert before["summarize"] is True and before["replace_instructions"] is False
    assert before["custom_instructions"] == "Be terse." and before["label"] == "kept"
    assert "session_tree" not in hooks_of(read_log(log))
    assert [r for r in read_log(log) if r["hook"] == "session_info_changed"] == []  # the label was not set


async def test_session_tree_observes_the_move_and_its_summary(tmp_path: Path) -> None:
    plugin = write_plugin(tmp_path, "recorder", RECORDER)
    log = tmp_path / "log.jsonl"
    async with start_host("-e", str(plugin), env={"NAV_LOG": str(log)}) as host:
        c = host.client
        entries = await _two_turns(host)
        first_answer = next(e for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant")
        old_leaf = entries[-1]["id"]
        host.faux.push("They asked a second question.")
        data = await c.navigate_tree(first_answer["id"], {"summarize": True, "label": "here"})
        assert data["cancelled"] is False and "editorText" not in data
        summary = data["summaryEntry"]
        assert summary["type"] == "branch_summary" and summary["summary"] == "They asked a second question."
        session_id = (await c.get_state())["sessionId"]
    log_records = read_log(log)
    nav = [r for r in log_records if r["hook"] in ("session_before_tree", "session_info_changed", "session_tree")]
    assert hooks_of(nav) == ["session_before_tree", "session_info_changed", "session_tree"]
    before, label, tree = nav
    assert before["new_leaf_id"] == first_answer["id"] and before["old_leaf_id"] == old_leaf
    assert label["kind"] == "label" and label["entry_id"] == first_answer["id"] and label["label"] == "here"
    assert tree["eventType"] == "SessionTreeEvent" and tree["sessionId"] == session_id
    assert tree["target_id"] == first_answer["id"]
    assert tree["old_leaf_id"] == old_leaf and tree["new_leaf_id"] == first_answer["id"]
    assert tree["summary_entry"] == summary


async def test_session_info_changed_on_name_and_label(tmp_path: Path) -> None:
    plugin = write_plugin(tmp_path, "recorder", RECORDER)
    log = tmp_path / "log.jsonl"
    async with start_host("-e", str(plugin), env={"NAV_LOG": str(log)}) as host:
        c = host.client
        host.faux.push("answer")
        await c.prompt_and_wait("question")
        entry = (await c.get_entries())["entries"][0]["id"]
        await c.call("set_session_name", name="  my session  ")
        refused = await c.request({"type": "set_session_name", "name": "   "})
        assert refused["success"] is False
        await c.call("set_label", entryId=entry, label="important")
        await c.call("set_label", entryId=entry)  # cleared
        missing = await c.request({"type": "set_label", "entryId": "deadbeef", "label": "x"})
        assert missing["success"] is False
    changes = [r for r in read_log(log) if r["hook"] == "session_info_changed"]
    assert [(r["eventType"], r["kind"], r["name"], r["entry_id"], r["label"]) for r in changes] == [
        ("SessionInfoChangedEvent", "name", "my session", None, None),
        ("SessionInfoChangedEvent", "label", None, entry, "important"),
        ("SessionInfoChangedEvent", "label", None, entry, None),
    ]


async def test_switch_and_fork_hooks_get_typed_events(tmp_path: Path) -> None:
    plugin = write_plugin(tmp_path, "recorder", RECORDER)
    log = tmp_path / "log.jsonl"
    async with start_host("-e", str(plugin), env={"NAV_LOG": str(log)}) as host:
        c = host.client
        entries = await _two_turns(host)
        first = (await c.get_state())["sessionId"]
        location = (await c.get_state())["sessionLocation"]
        assert (await c.call("fork", entryId=_users(entries)[1]["id"]))["cancelled"] is False
        assert await c.call("clone") == {"cancelled": False}
        assert await c.call("new_session") == {"cancelled": False}
        assert await c.call("switch_session", sessionId=first) == {"cancelled": False}
    before = [r for r in read_log(log) if r["hook"].startswith("session_before_")]
    assert [(r["hook"], r["eventType"]) for r in before] == [
        ("session_before_fork", "SessionBeforeForkEvent"),
        ("session_before_fork", "SessionBeforeForkEvent"),
        ("session_before_switch", "SessionBeforeSwitchEvent"),
        ("session_before_switch", "SessionBeforeSwitchEvent"),
    ]
    assert [(r.get("position"), r.get("reason")) for r in before] == [
        ("before", None),
        ("at", None),
        (None, "new"),
        (None, "resume"),
    ]
    assert before[0]["entry_id"] == _users(entries)[1]["id"]
    assert before[3]["target_session_file"] == location
    starts = [(r["reason"]) for r in read_log(log) if r["hook"] == "session_start"]
    assert starts == ["startup", "fork", "fork", "new", "resume"]


async def test_a_dict_is_not_a_cancel(tmp_path: Path) -> None:
    """Results are contract types only: ``{"cancel": True}`` is reported and the switch goes ahead."""
    plugin = write_plugin(tmp_path, "dict_cancel", DICT_CANCEL)
    async with start_host("-e", str(plugin)) as host:
        c = host.client
        before = (await c.get_state())["sessionId"]
        assert await c.call("new_session") == {"cancelled": False}
        assert (await c.get_state())["sessionId"] != before
        errors = [e for e in c.events if e.get("type") == "extension_error"]
        assert [(e["event"], e["error"]) for e in errors] == [
            ("session_before_switch", "returned dict; expected Cancel or None")
        ]
        assert errors[0]["extensionPath"].endswith("dict_cancel.py")
