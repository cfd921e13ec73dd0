"""Session commands through the real ``atomic --mode rpc`` host, on both storage backends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pg_helpers import POSTGRES_STORE
from srpc_helpers import (
    CANCEL_PLUGIN,
    ENTRY_ID_RE,
    ISO_RE,
    chat,
    error_of,
    read_jsonl,
    state,
    unnumbered,
    write_plugin,
)

BACKENDS = [pytest.param((), id="jsonl"), pytest.param(("--session-store", "sqlite"), id="sqlite"), POSTGRES_STORE]

INFO_KEYS = {"path", "id", "cwd", "hasName", "created", "modified", "messageCount", "firstMessage"}


def user_entries(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in entries if e["type"] == "message" and e["message"]["role"] == "user"]


@pytest.mark.parametrize("store", BACKENDS)
async def test_lifecycle_new_switch_list_delete(srpc_host: Any, store: tuple[str, ...]) -> None:
    async with srpc_host(*store) as host:
        c = host.client
        await chat(host, "first question", "second question")
        first = await state(c)
        first_id = first["sessionId"]
        assert first["messageCount"] == 4

        assert await c.call("new_session", parentSession=first_id) == {"cancelled": False}
        second = await state(c)
        assert second["sessionId"] != first_id and second["messageCount"] == 0
        # a new session starts with model_change (root) + thinking_level_change
        entries = (await c.call("get_entries"))["entries"]
        assert [e["type"] for e in entries] == ["model_change", "thinking_level_change"]
        assert entries[0]["parentId"] is None
        await chat(host, "other topic")
        await c.call("set_session_name", name="  Named one  ")
        assert (await state(c))["sessionName"] == "Named one"

        listed = (await c.call("list_sessions"))["sessions"]
        by_id = {s["id"]: s for s in listed}
        assert set(by_id) == {first_id, second["sessionId"]}
        # newest modified first
        assert listed[0]["id"] == second["sessionId"]
        for info in listed:
            assert set(info) >= INFO_KEYS
            assert ISO_RE.match(info["created"]) and ISO_RE.match(info["modified"])
            assert info["cwd"] == str(host.cwd)
        old = by_id[first_id]
        assert old["messageCount"] == 4 and old["firstMessage"] == "first question"
        assert old["hasName"] is False and "name" not in old
        new = by_id[second["sessionId"]]
        assert new["name"] == "Named one" and new["hasName"] is True
        assert new["messageCount"] == 2 and new["firstMessage"] == "other topic"
        if not store:  # JSONL: the header records the given parent
            assert read_jsonl(new["path"])[0]["parentSession"] == first_id

        # switch back: context, model and thinking level restored from the branch
        assert await c.call("switch_session", sessionId=first_id) == {"cancelled": False}
        back = await state(c)
        assert back["sessionId"] == first_id and back["messageCount"] == 4
        assert back["model"]["id"] == "faux-1" and back["thinkingLevel"] == first["thinkingLevel"]
        messages = await c.call("get_messages")
        assert [m["role"] for m in messages["messages"]] == ["user", "assistant"] * 2

        assert await error_of(c, "switch_session", sessionId="0000-nope") == "Session not found: 0000-nope"
        assert (await state(c))["sessionId"] == first_id

        # delete: open one refused, unknown id no-op, request id fallback, both absent → error
        assert await error_of(c, "delete_session", sessionId=first_id) == (
            f"Cannot delete the session that is currently open: {first_id}"
        )
        assert (await c.request({"type": "delete_session", "sessionId": "unknown-id"}))["success"] is True
        assert await unnumbered(c, {"type": "delete_session"}) == {
            "type": "response",
            "command": "delete_session",
            "success": False,
            "error": "delete_session requires sessionId",
        }
        response = await c.request({"type": "delete_session", "id": second["sessionId"]})
        assert response == {
            "id": second["sessionId"],
            "type": "response",
            "command": "delete_session",
            "success": True,
        }
        assert [s["id"] for s in (await c.call("list_sessions"))["sessions"]] == [first_id]
        if not store:
            assert not Path(new["path"]).exists()
            assert Path(old["path"]).exists()
        assert await error_of(c, "switch_session", sessionId=second["sessionId"]) == (
            f"Session not found: {second['sessionId']}"
        )


@pytest.mark.parametrize("store", BACKENDS)
async def test_entries_tree_labels_fork_clone(srpc_host: Any, store: tuple[str, ...]) -> None:
    async with srpc_host(*store) as host:
        c = host.client
        # fork before the first assistant message: the session was never saved
        start = (await c.call("get_entries"))["entries"]
        assert await error_of(c, "clone") in (
            "This session has not been saved yet. Wait for the first assistant response before cloning or forking it.",
        )
        assert await error_of(c, "fork", entryId=start[0]["id"]) == "Invalid entry ID for forking"

        await chat(host, "alpha", "beta", "gamma")
        page = await c.call("get_entries")
        entries, leaf = page["entries"], page["leafId"]
        assert leaf == entries[-1]["id"]
        assert all(ENTRY_ID_RE.match(e["id"]) and ISO_RE.match(e["timestamp"]) for e in entries)
        # since-cursor: strictly after; newest → empty; unknown → exact error
        assert (await c.call("get_entries", since=entries[2]["id"]))["entries"] == entries[3:]
        assert await c.call("get_entries", since=leaf) == {"entries": [], "leafId": leaf}
        assert await error_of(c, "get_entries", since="deadbeef") == "Entry not found: deadbeef"

        users = user_entries(entries)
        await c.call("set_label", entryId=users[1]["id"], label="checkpoint")
        tree = (await c.call("get_tree"))["tree"]
        assert len(tree) == 1
        node, labelled = tree[0], None
        while node["children"]:
            if node["entry"]["id"] == users[1]["id"]:
                labelled = node
            node = node["children"][0]
        assert labelled is not None and labelled["label"] == "checkpoint"
        assert ISO_RE.match(labelled["labelTimestamp"])
        assert await error_of(c, "set_label", entryId="ffffffff", label="x") == "Entry ffffffff not found"

        fork_messages = (await c.call("get_fork_messages"))["messages"]
        assert fork_messages == [
            {"entryId": u["id"], "text": t} for u, t in zip(users, ("alpha", "beta", "gamma"), strict=True)
        ]

        source = await state(c)
        assert await error_of(c, "fork", entryId=entries[-1]["id"]) == "Invalid entry ID for forking"
        assert await error_of(c, "fork", entryId="abcdef01") == "Invalid entry ID for forking"
        result = await c.call("fork", entryId=users[2]["id"])
        assert result == {"text": "gamma", "cancelled": False}
        forked = await state(c)
        assert forked["sessionId"] != source["sessionId"]
        # the fork holds root → parent of "gamma" (two turns), plus the re-created label
        fork_entries = (await c.call("get_entries"))["entries"]
        assert [m["role"] for m in (await c.call("get_messages"))["messages"]] == ["user", "assistant"] * 2
        assert fork_entries[-1]["type"] == "label" and fork_entries[-1]["label"] == "checkpoint"
        if not store:
            header = read_jsonl(forked["sessionLocation"])[0]
            assert header["parentSession"] == source["sessionLocation"]

        await chat(host, "delta")
        assert await c.call("clone") == {"cancelled": False}
        cloned = await state(c)
        assert cloned["sessionId"] != forked["sessionId"] and cloned["messageCount"] == 6
        ids = {s["id"] for s in (await c.call("list_sessions"))["sessions"]}
        assert {source["sessionId"], forked["sessionId"], cloned["sessionId"]} <= ids


async def test_navigate_tree_branches(srpc_host: Any) -> None:
    async with srpc_host() as host:
        c = host.client
        await chat(host, "one", "two")
        entries = (await c.call("get_entries"))["entries"]
        users = user_entries(entries)
        # a user target: leaf = its parent, editorText = its text
        data = await c.call("navigate_tree", targetId=users[1]["id"])
        assert data == {"cancelled": False, "editorText": "two"}
        assert (await c.call("get_entries"))["leafId"] == users[1]["parentId"]
        assert len((await c.call("get_messages"))["messages"]) == 2
        await chat(host, "two prime")
        tree_entries = (await c.call("get_entries"))["entries"]
        assert user_entries(tree_entries)[-1]["parentId"] == users[1]["parentId"]
        # every branch stays in the file; fork messages cover all of them
        assert [m["text"] for m in (await c.call("get_fork_messages"))["messages"]] == [
            "one",
            "two",
            "two prime",
        ]
        # a non-user target: leaf = target, with a label option
        assistant = entries[-1]["id"]
        assert await c.call("navigate_tree", targetId=assistant, options={"label": "old end"}) == {"cancelled": False}
        assert len((await c.call("get_messages"))["messages"]) == 4
        labels = [e for e in (await c.call("get_entries"))["entries"] if e["type"] == "label"]
        assert labels[-1]["targetId"] == assistant and labels[-1]["label"] == "old end"
        assert await error_of(c, "navigate_tree", targetId="00000000") == "Entry 00000000 not found"


async def test_session_name_summary_and_events(srpc_host: Any) -> None:
    async with srpc_host() as host:
        c = host.client
        await chat(host, "hi")
        start = len(c.events)
        await c.call("set_session_name", name="  My work ")
        event = await c.wait_for_event("session_info_changed", after=start)
        assert event == {"type": "session_info_changed", "name": "My work"}
        assert await error_of(c, "set_session_name", name="   ") == "Session name cannot be empty"
        assert (await state(c))["sessionName"] == "My work"
        assert await c.call("get_session_summary") == {"summary": None}

    # a session_summary entry written by an earlier process shows in the listing and summary command
    async with srpc_host() as first:
        await chat(first, "fix the parser", "and the test")
        st = await state(first.client)
    path = Path(st["sessionLocation"])
    records = read_jsonl(path)
    newest = [r for r in records if r.get("type") == "message"][-1]
    summary = {
        "type": "session_summary",
        "id": "5ummar1e",
        "parentId": newest["id"],
        "timestamp": "2030-01-01T00:00:00.000Z",
        "summary": "Fixed the parser",
        "summarizedThroughId": newest["id"],
    }
    with path.open("a") as f:
        f.write(json.dumps(summary, separators=(",", ":")) + "\n")
    async with srpc_host("--session", st["sessionId"]) as host:
        c = host.client
        assert (await c.call("get_session_summary"))["summary"] == summary
        (info,) = [s for s in (await c.call("list_sessions"))["sessions"] if s["id"] == st["sessionId"]]
        assert info["summary"] == "Fixed the parser" and info["summarizedThroughId"] == newest["id"]


async def test_plugins_cancel_switch_new_fork_clone(srpc_host: Any, base: Path) -> None:
    async with srpc_host() as host:
        await chat(host, "keep me")
        other = await state(host.client)
    plugin = write_plugin(base, "cancel_all", CANCEL_PLUGIN)
    async with srpc_host("-e", str(plugin)) as host:
        c = host.client
        await chat(host, "here")
        before = await state(c)
        assert await c.call("new_session") == {"cancelled": True}
        assert await c.call("switch_session", sessionId=other["sessionId"]) == {"cancelled": True}
        user = user_entries((await c.call("get_entries"))["entries"])[0]
        assert await c.call("fork", entryId=user["id"]) == {"text": "here", "cancelled": True}
        assert await c.call("clone") == {"cancelled": True}
        after = await state(c)
        assert after["sessionId"] == before["sessionId"] and after["messageCount"] == 2
        assert len((await c.call("list_sessions"))["sessions"]) == 2


async def test_switch_session_directory_cwd_override_and_path(srpc_host: Any, base: Path) -> None:
    async with srpc_host("--session-dir", str(base / "elsewhere")) as host:
        await chat(host, "in another store")
        foreign = await state(host.client)
    async with srpc_host() as host:
        c = host.client
        await chat(host, "home store")
        home = await state(c)
        # the id lives only in the other directory: no fallback from the project store
        assert await error_of(c, "switch_session", sessionId=foreign["sessionId"]) == (
            f"Session not found: {foreign['sessionId']}"
        )
        # and an explicit directory never falls back to the project store
        assert (
            await error_of(c, "switch_session", sessionId=home["sessionId"], sessionDirectory=str(base / "elsewhere"))
            == f"Session not found: {home['sessionId']}"
        )
        override = base / "override"
        override.mkdir()
        assert await c.call(
            "switch_session",
            sessionId=foreign["sessionId"],
            sessionDirectory=str(base / "elsewhere"),
            cwdOverride=str(override),
        ) == {"cancelled": False}
        assert (await state(c))["sessionId"] == foreign["sessionId"]
        host.faux.push({"content": [{"type": "toolCall", "name": "bash", "arguments": {"command": "pwd"}}]})
        host.faux.push("done")
        events = await c.prompt_and_wait("where am I")
        (end,) = [e for e in events if e["type"] == "tool_execution_end"]
        assert str(override) in json.dumps(end["result"])
        # legacy sessionPath
        assert await c.call("switch_session", sessionPath=home["sessionLocation"]) == {"cancelled": False}
        assert (await state(c))["sessionId"] == home["sessionId"]
        assert await error_of(c, "switch_session") == "Missing required field: sessionId"


async def test_import_recovery_and_export_html(srpc_host: Any, base: Path) -> None:
    # a hand-written session whose last assistant turn called a tool that never answered
    header = {
        "type": "session",
        "version": 3,
        "id": "imported-1",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/somewhere",
    }
    usage = {
        "input": 1,
        "output": 1,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 2,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }
    lines = [
        header,
        {
            "type": "message",
            "id": "a0000001",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "<script>alert(1)</script> run it", "timestamp": 1767225601000},
        },
        {
            "type": "message",
            "id": "a0000002",
            "parentId": "a0000001",
            "timestamp": "2026-01-01T00:00:02.000Z",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "let me think"},
                    {"type": "text", "text": "running"},
                    {"type": "toolCall", "id": "call_1", "name": "bash", "arguments": {"command": "sleep 100"}},
                ],
                "api": "faux",
                "provider": "faux",
                "model": "faux-1",
                "usage": usage,
                "stopReason": "toolUse",
                "timestamp": 1767225602000,
            },
        },
    ]
    source = base / "2026-01-01T00-00-00-000Z_imported-1.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in lines))
    async with srpc_host() as host:
        c = host.client
        assert await error_of(c, "import_session", inputPath=str(base / "missing.jsonl")) == (
            f"File not found: {base / 'missing.jsonl'}"
        )
        work = str(host.cwd)
        assert await c.call("import_session", inputPath=str(source), cwdOverride=work) == {"cancelled": False}
        st = await state(c)
        assert st["sessionId"] == "imported-1"
        assert Path(st["sessionLocation"]).name == source.name
        assert Path(st["sessionLocation"]).parent != base
        # recovery: the interrupted tool call gets an error result; repeating gives the same report
        report = await c.call("start_pending_recovery", reason="resume")
        assert report["dropped"] == 1 and report["replayed"] == 0
        assert await c.call("start_pending_recovery") == report
        entries = (await c.call("get_entries"))["entries"]
        result = entries[-1]["message"]
        assert result["role"] == "toolResult" and result["toolCallId"] == "call_1" and result["isError"]
        assert len([e for e in entries if e["message"]["role"] == "toolResult"]) == 1
        on_disk = read_jsonl(st["sessionLocation"])
        assert on_disk[-1]["id"] == entries[-1]["id"]

        # export: add a bash execution and a tool round so every message type is present
        await c.call("bash", command="echo from-bash")
        host.faux.push({"content": [{"type": "toolCall", "name": "bash", "arguments": {"command": "echo hi"}}]})
        host.faux.push("finished")
        await c.prompt_and_wait("continue")
        out = base / "export.html"
        assert await c.call("export_html", outputPath=str(out)) == {"path": str(out)}
        html = out.read_text()
        assert "<script>alert(1)</script>" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html or "\\u003cscript" in html
        for fragment in ("run it", "let me think", "running", "sleep 100", "from-bash", "finished", "echo hi"):
            assert fragment in html, fragment
        default = await c.call("export_html")
        assert Path(default["path"]).is_file()


async def test_long_session_tree_and_switch(srpc_host: Any, base: Path) -> None:
    """A 1,500-turn linear session: get_tree nests 3,000 levels deep and must still answer."""
    from builtin_plugins.stores import open_builtin_store as open_store

    work = base / "work"
    work.mkdir(exist_ok=True)
    store = open_store("jsonl", base / "agent", None, str(work), fsync="never")
    session = store.new_session(str(work))
    session.append_model_change("faux", "faux-1")
    session.append_thinking_level_change("low")
    usage = {
        "input": 1,
        "output": 1,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 2,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }
    for i in range(1500):
        session.append_message({"role": "user", "content": [{"type": "text", "text": f"q{i}"}], "timestamp": i})
        session.append_message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": f"a{i}"}],
                "api": "faux",
                "provider": "faux",
                "model": "faux-1",
                "usage": usage,
                "stopReason": "stop",
                "timestamp": i,
            }
        )
    long_id, leaf = session.id, session.leaf_id
    session.close()
    store.close()
    async with srpc_host() as host:
        c = host.client
        assert await c.call("switch_session", sessionId=long_id) == {"cancelled": False}
        st = await state(c)
        assert st["messageCount"] == 3000 and st["thinkingLevel"] == "low"
        data = await c.call("get_tree", timeout=60)
        assert data["leafId"] == leaf
        depth, node = 1, data["tree"][0]
        while node["children"]:
            (node,) = node["children"]
            depth += 1
        assert depth == 3002 and node["entry"]["id"] == leaf
        assert (await c.call("get_entries", since=leaf))["entries"] == []
        messages = (await c.call("get_messages"))["messages"]
        assert messages[0]["content"][0]["text"] == "q0" and messages[-1]["content"][0]["text"] == "a1499"
