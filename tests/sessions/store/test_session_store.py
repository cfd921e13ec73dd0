"""Store semantics shared by both backends: lazy write, reopen, tree, fork/clone, listing, delete."""

from __future__ import annotations

import pytest
from session_helpers import CWD, assistant, chat, user

from atomic_host.session import EntryNotFound, SessionNotFound, SessionNotSaved


def test_lazy_write_until_first_assistant(store):
    session = store.new_session(CWD)
    session.append_model_change("faux", "faux-1")
    session.append_message(user("hi"))
    assert not session.persisted
    assert store.list(CWD) == []
    with pytest.raises(SessionNotFound):
        store.open(session.id)
    session.append_message(assistant("hello"))
    assert session.persisted
    reopened = store.open(session.id)
    assert [e["id"] for e in reopened.entries] == [e["id"] for e in session.entries]
    assert reopened.leaf_id == session.leaf_id


def test_reopen_continue_and_leaf_is_last_appended(store):
    session = chat(store)
    first_user = session.entries[2]["id"]
    session.set_leaf(first_user)  # in-memory only
    reopened = store.open(session.id)
    assert reopened.leaf_id == session.entries[-1]["id"]
    reopened.append_message(user("more"))
    again = store.open(session.id)
    assert again.entries[-1]["message"]["content"][0]["text"] == "more"
    assert again.entries[-1]["parentId"] == session.entries[-1]["id"]


def test_entry_shape_and_ids(store):
    session = chat(store, 1)
    for entry in session.entries:
        assert len(entry["id"]) == 8 and int(entry["id"], 16) >= 0
        assert entry["timestamp"].endswith("Z")
    assert session.entries[0]["parentId"] is None
    assert [e["parentId"] for e in session.entries[1:]] == [e["id"] for e in session.entries[:-1]]


def test_tree_labels_and_branches(store):
    session = chat(store, 2)
    first_answer = session.entries[3]["id"]
    session.set_leaf(first_answer)
    side = session.append_message(user("side question"))
    session.append_label(side["id"], "side")
    session.append_label(first_answer, "checkpoint")
    session.append_label(first_answer, None)  # cleared
    session.append_label(side["id"], "renamed")
    with pytest.raises(EntryNotFound, match="Entry nope not found"):
        session.append_label("nope", "x")
    reopened = store.open(session.id)
    roots = reopened.tree()
    assert len(roots) == 1
    node = roots[0]
    while len(node["children"]) == 1:
        node = node["children"][0]
    assert node["entry"]["id"] == first_answer and "label" not in node
    kids = node["children"]
    assert [k["entry"]["id"] for k in kids] == [session.entries[4]["id"], side["id"]]  # by timestamp
    assert kids[1]["label"] == "renamed" and kids[1]["labelTimestamp"]
    assert reopened.labels() == {side["id"]: "renamed"}
    branch_ids = [e["id"] for e in reopened.branch()]
    assert side["id"] in branch_ids and session.entries[4]["id"] not in branch_ids


def test_tree_orphans_and_self_parent_are_roots(store):
    session = chat(store, 1)
    session.append_entry(
        {"type": "custom", "id": "deadbeef", "parentId": "missing1", "timestamp": "2026-01-01T00:00:00.000Z"}
    )
    session.append_entry(
        {"type": "custom", "id": "feedface", "parentId": "feedface", "timestamp": "2026-01-01T00:00:00.000Z"}
    )
    roots = store.open(session.id).tree()
    assert [r["entry"]["id"] for r in roots][1:] == ["deadbeef", "feedface"]


def test_entries_since(store):
    session = chat(store, 3)
    ids = [e["id"] for e in session.entries]
    assert session.entries_since(ids[-1]) == []
    assert [e["id"] for e in session.entries_since(ids[2])] == ids[3:]
    with pytest.raises(EntryNotFound, match="Entry not found: zzzz"):
        session.entries_since("zzzz")
    with pytest.raises(KeyError):
        session.entries_since("zzzz")


def test_fork_and_clone(store):
    session = chat(store, 2)
    second_user = session.entries[4]
    session.append_label(session.entries[2]["id"], "start")
    forked = store.fork(session, second_user["id"])
    assert forked.id != session.id
    assert forked.header["parentSession"] == session.location
    types = [e["type"] for e in forked.entries]
    assert types == ["model_change", "thinking_level_change", "message", "message", "label"]
    assert forked.entries[-1]["targetId"] == session.entries[2]["id"]
    assert forked.labels() == {session.entries[2]["id"]: "start"}
    assert forked.persisted and store.open(forked.id).leaf_id == forked.leaf_id
    assert session.entry_text(second_user["id"]) == "question 1"

    with pytest.raises(ValueError, match="Invalid entry ID for forking"):
        store.fork(session, session.entries[3]["id"])  # an assistant message

    cloned = store.clone(session)
    assert [e["id"] for e in cloned.entries if e["type"] != "label"] == [
        e["id"] for e in session.branch() if e["type"] != "label"
    ]


def test_fork_of_first_message_is_empty_session(store):
    session = store.new_session(CWD)
    first = session.append_message(user("hello"))
    session.append_message(assistant())
    forked = store.fork(session, first["id"])
    assert forked.entries == [] and forked.header["parentSession"] == session.location


def test_fork_unsaved_session_is_refused(store):
    session = store.new_session(CWD)
    first = session.append_message(user("hello"))
    with pytest.raises(SessionNotSaved, match="has not been saved yet"):
        store.fork(session, first["id"])
    with pytest.raises(SessionNotSaved):
        store.clone(session)


def test_clone_without_leaf(store):
    session = chat(store, 1)
    session.set_leaf(None)
    with pytest.raises(ValueError, match="no current entry selected"):
        store.clone(session)


def test_listing_fields_and_order(store):
    older = chat(store, 1)
    newer = store.new_session(CWD, parent_session="/x/parent.jsonl")
    newer.append_message({"role": "user", "content": "   plain string prompt", "timestamp": 1_900_000_000_000})
    newer.append_message({**assistant(), "timestamp": 1_900_000_001_000})
    newer.append_session_info("  Refactor auth ")
    listing = store.list(CWD)
    assert [i["id"] for i in listing] == [newer.id, older.id]
    top = listing[0]
    assert top["name"] == "Refactor auth" and top["hasName"] is True
    assert top["parentSessionPath"] == "/x/parent.jsonl"
    assert top["messageCount"] == 2
    assert top["firstMessage"] == "   plain string prompt"
    assert top["modified"] == "2030-03-17T17:46:41.000Z"
    assert top["created"] == newer.header["timestamp"]
    assert listing[1]["hasName"] is False and "name" not in listing[1]
    assert listing[1]["firstMessage"] == "question 0" and listing[1]["messageCount"] == 2
    assert store.list("/other/project") == []


def test_summary_and_retirement(store):
    session = chat(store, 2)
    last = session.entries[-1]["id"]
    summary = session.append("session_summary", summary="Fixed the parser", summarizedThroughId=last)
    assert session.summary() == summary
    info = store.list(CWD)[0]
    assert info["summary"] == "Fixed the parser" and info["summarizedThroughId"] == last
    session.append("branch_summary", fromId="root", summary="went elsewhere")
    assert session.summary() is None
    assert "summary" not in store.list(CWD)[0]
    assert store.open(session.id).summary() is None


def test_cleared_name(store):
    session = chat(store, 1)
    session.append_session_info("x")
    session.append_session_info("")
    assert session.name is None
    info = store.list(CWD)[0]
    assert "name" not in info and info["hasName"] is True


def test_internal_workflow_sessions_hidden(store):
    session = store.new_session(CWD)
    session.header.update(internal=True, workflow={"runId": "r", "stageId": "s", "stageName": "n"})
    session.append_message(user("x"))
    session.append_message(assistant())
    visible = chat(store, 1)
    assert [i["id"] for i in store.list(CWD)] == [visible.id]


def test_delete(store):
    keep, gone = chat(store, 1), chat(store, 1)
    store.delete(gone.id)
    store.delete("unknown-id")  # no-op
    assert [i["id"] for i in store.list(CWD)] == [keep.id]
    with pytest.raises(SessionNotFound):
        store.open(gone.id)


def test_invalid_ids_are_refused(store):
    for bad in ("../etc/passwd", "a/b", "..", "-x", ""):
        with pytest.raises(ValueError):
            store.open(bad)
        with pytest.raises(ValueError):
            store.delete(bad)


def test_most_recent(store):
    assert store.most_recent(CWD) is None
    chat(store, 1)
    newest = chat(store, 1)
    assert store.most_recent(CWD).id == newest.id


def test_fork_messages_whole_file(store):
    session = chat(store, 2)
    session.set_leaf(session.entries[3]["id"])
    session.append_message(user("branch b"))
    session.append_message(
        {
            "role": "user",
            "content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}],
            "timestamp": 5,
        }
    )
    texts = [m["text"] for m in store.open(session.id).fork_messages()]
    assert texts == ["question 0", "question 1", "branch b"]


def test_stats(store):
    session = store.new_session(CWD)
    session.append_message(user("x"))
    session.append_message(assistant("y", tool_calls=[("c1", "read")]))
    stats = session.stats()
    assert stats["userMessages"] == 1 and stats["assistantMessages"] == 1 and stats["toolCalls"] == 1
    assert stats["tokens"]["total"] == 15 and stats["cost"] == pytest.approx(0.3)


def test_sqlite_database_is_owner_only(agent_dir):
    import stat

    from builtin_plugins.stores import open_builtin_store as open_store

    db = open_store("sqlite", agent_dir, None, CWD)
    chat(db, 1)
    assert stat.S_IMODE((agent_dir / "sessions.db").stat().st_mode) == 0o600
    assert db.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()


def test_memory_store_never_writes(agent_dir):
    from builtin_plugins.stores import open_builtin_store as open_store

    mem = open_store("memory", agent_dir, None, CWD)
    session = chat(mem, 1)
    assert session.location is None and mem.list(CWD) == []
    forked = mem.fork(session, session.entries[2]["id"])
    assert forked.header.get("parentSession") is None and not agent_dir.exists()
