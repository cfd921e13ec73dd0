"""The JSONL file format: hand-written reference fixtures, migration, torn lines, safety, modes."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from session_helpers import CWD, assistant, chat, user

from atomic_host.kit.sessions.errors import SessionNotFound
from atomic_host.kit.sessions.store import default_session_dir
from atomic_host.testing import read_jsonl
from builtin_plugins.stores.jsonl import JsonlStore

V3 = [
    {
        "type": "session",
        "version": 3,
        "id": "019fdf86-cf98-7327-8a73-21365028f6ae",
        "timestamp": "2026-07-13T10:00:00.000Z",
        "cwd": CWD,
    },
    {
        "type": "model_change",
        "id": "a0000001",
        "parentId": None,
        "timestamp": "2026-07-13T10:00:00.001Z",
        "provider": "anthropic",
        "modelId": "claude-sonnet-4-5",
    },
    {
        "type": "thinking_level_change",
        "id": "a0000002",
        "parentId": "a0000001",
        "timestamp": "2026-07-13T10:00:00.002Z",
        "thinkingLevel": "medium",
    },
    {
        "type": "message",
        "id": "a0000003",
        "parentId": "a0000002",
        "timestamp": "2026-07-13T10:00:01.000Z",
        "message": {
            "role": "user",
            "content": [{"type": "text", "text": "fix the parser test"}],
            "timestamp": 1783936801000,
        },
    },
    {
        "type": "message",
        "id": "a0000004",
        "parentId": "a0000003",
        "timestamp": "2026-07-13T10:00:02.000Z",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "Done."}],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": {
                "input": 1,
                "output": 2,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 3,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": "stop",
            "timestamp": 1783936802000,
        },
    },
    {
        "type": "context_window_change",
        "id": "a0000005",
        "parentId": "a0000004",
        "timestamp": "2026-07-13T10:00:03.000Z",
        "contextWindow": 1000000,
        "future": {"nested": [1, 2]},
    },
    {
        "type": "session_info",
        "id": "a0000006",
        "parentId": "a0000005",
        "timestamp": "2026-07-13T10:00:04.000Z",
        "name": "Parser",
    },
]


def write_lines(path: Path, records: list, tail: bytes = b"") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records).encode() + tail
    path.write_bytes(data)
    return path


def project_dir(agent_dir: Path) -> Path:
    return default_session_dir(agent_dir, CWD)


def test_session_dir_layout(agent_dir):
    assert default_session_dir(agent_dir, "/home/u/proj") == agent_dir / "sessions" / "--home-u-proj--"
    assert default_session_dir(agent_dir, "C:\\w\\x").name == "--C--w-x--"


def test_v3_fixture_opens_continues_and_round_trips(jsonl_store, agent_dir):
    path = write_lines(
        project_dir(agent_dir) / "2026-07-13T10-00-00-000Z_019fdf86-cf98-7327-8a73-21365028f6ae.jsonl", V3
    )
    original = path.read_bytes()
    session = jsonl_store.open("019fdf86-cf98-7327-8a73-21365028f6ae")
    assert session.leaf_id == "a0000006" and session.name == "Parser"
    assert session.entries[4]["future"] == {"nested": [1, 2]}
    new = session.append_message(user("next"))
    data = path.read_bytes()
    assert data.startswith(original)  # appended, never rewritten
    last = json.loads(data.splitlines()[-1])
    assert last == new and last["parentId"] == "a0000006"
    assert list(last) == ["type", "id", "parentId", "timestamp", "message"]
    reopened = jsonl_store.open_path(path)
    assert reopened.entries[:-1] == V3[1:]
    info = jsonl_store.list(CWD)[0]
    assert info["firstMessage"] == "fix the parser test" and info["name"] == "Parser"
    assert info["messageCount"] == 3 and info["created"] == "2026-07-13T10:00:00.000Z"


def test_written_file_is_reference_format(jsonl_store):
    session = chat(jsonl_store, 1)
    path = Path(session.location)
    assert path.name.endswith(f"_{session.id}.jsonl")
    assert path.name[:24] == session.header["timestamp"].replace(":", "-").replace(".", "-")
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    header = json.loads(lines[0])
    assert header == {
        "type": "session",
        "version": 3,
        "id": session.id,
        "timestamp": header["timestamp"],
        "cwd": CWD,
    }
    assert b", " not in lines[1]  # compact separators, like JSON.stringify


def test_v1_migration(jsonl_store, agent_dir):
    v1 = [
        {"type": "session", "id": "old-v1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": CWD},
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "hello", "timestamp": 1735689601000},
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:02.000Z",
            "message": {
                "role": "hookMessage",
                "customType": "x",
                "content": "hook",
                "display": True,
                "timestamp": 1735689602000,
            },
        },
        {
            "type": "compaction",
            "timestamp": "2025-01-01T00:00:03.000Z",
            "summary": "s",
            "firstKeptEntryIndex": 2,
            "tokensBefore": 10,
        },
    ]
    path = write_lines(project_dir(agent_dir) / "2025-01-01T00-00-00-000Z_old-v1.jsonl", v1)
    session = jsonl_store.open("old-v1")
    ids = [e["id"] for e in session.entries]
    assert all(len(i) == 8 for i in ids) and len(set(ids)) == 3
    assert [e["parentId"] for e in session.entries] == [None, ids[0], ids[1]]
    assert session.entries[2]["firstKeptEntryId"] == ids[1] and "firstKeptEntryIndex" not in session.entries[2]
    assert session.entries[1]["message"]["role"] == "custom"
    on_disk = read_jsonl(path)
    assert on_disk[0]["version"] == 3 and [r["id"] for r in on_disk[1:]] == ids
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_v2_migration_renames_hook_message(jsonl_store, agent_dir):
    v2 = [
        dict(V3[0], version=2, id="old-v2"),
        dict(V3[3]),
        {
            "type": "message",
            "id": "b1",
            "parentId": "a0000003",
            "timestamp": "2026-07-13T10:00:02.000Z",
            "message": {
                "role": "hookMessage",
                "customType": "x",
                "content": "c",
                "display": True,
                "timestamp": 1,
            },
        },
    ]
    path = write_lines(project_dir(agent_dir) / "x_old-v2.jsonl", v2)
    session = jsonl_store.open("old-v2")
    assert session.entries[1]["message"]["role"] == "custom" and session.entries[1]["id"] == "b1"
    assert read_jsonl(path)[0]["version"] == 3


def test_torn_last_line_is_skipped_and_next_append_starts_fresh(jsonl_store, agent_dir):
    write_lines(
        project_dir(agent_dir) / "t_torn.jsonl",
        [dict(V3[0], id="torn"), *V3[1:5]],
        tail=b'{"type":"message","id":"dead0001","parentId":"a0000004","timest',
    )
    session = jsonl_store.open("torn")
    assert session.leaf_id == "a0000004" and len(session.entries) == 4
    assert jsonl_store.list(CWD)[0]["messageCount"] == 2
    new = session.append_message(user("after crash"))
    reopened = jsonl_store.open("torn")
    assert reopened.leaf_id == new["id"] and reopened.entries[-1] == new


def test_garbage_lines_skipped_and_bad_header_invalid(jsonl_store, agent_dir):
    d = project_dir(agent_dir)
    write_lines(d / "g_garbage.jsonl", [dict(V3[0], id="garbage"), V3[1]], tail=b"not json\n[1,2]\n")
    assert len(jsonl_store.open("garbage").entries) == 1
    (d / "bad.jsonl").write_text('{"type":"message","id":"x"}\n')
    assert {i["id"] for i in jsonl_store.list(CWD)} == {"garbage"}


def test_write_failure_unpublishes_and_truncates(jsonl_store, monkeypatch):
    session = chat(jsonl_store, 1)
    path = Path(session.location)
    size, count, leaf = path.stat().st_size, len(session.entries), session.leaf_id

    def broken_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError):
        session.append_message(user("lost"))
    monkeypatch.undo()
    assert path.stat().st_size == size and len(session.entries) == count and session.leaf_id == leaf
    session.append_message(user("kept"))
    assert jsonl_store.open(session.id).entries[-1]["message"]["content"][0]["text"] == "kept"


def test_modes_are_owner_only(jsonl_store):
    session = chat(jsonl_store, 1)
    path = Path(session.location)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_symlinks_are_never_followed(jsonl_store, agent_dir, tmp_path):
    outside = write_lines(tmp_path / "outside" / "x_evil.jsonl", [dict(V3[0], id="evil"), *V3[1:5]])
    d = project_dir(agent_dir)
    d.mkdir(parents=True, exist_ok=True)
    os.symlink(outside, d / "2026-07-13T10-00-00-000Z_evil.jsonl")
    with pytest.raises(SessionNotFound):
        jsonl_store.open("evil")
    with pytest.raises(SessionNotFound):
        jsonl_store.open_path(d / "2026-07-13T10-00-00-000Z_evil.jsonl")
    assert jsonl_store.list(CWD) == []
    jsonl_store.delete("evil")
    assert outside.exists()


def test_open_with_directory_never_falls_back(jsonl_store, agent_dir, tmp_path):
    session = chat(jsonl_store, 1)
    other = tmp_path / "other-store"
    other.mkdir()
    with pytest.raises(SessionNotFound):
        jsonl_store.open(session.id, other)
    assert jsonl_store.open(session.id, Path(session.location).parent).id == session.id


def test_custom_session_dir_filters_by_cwd(agent_dir, tmp_path):
    store = JsonlStore(agent_dir, tmp_path / "flat")
    mine = chat(store, 1)
    theirs = store.new_session("/elsewhere")
    theirs.append_message(user("x"))
    theirs.append_message(assistant())
    assert [i["id"] for i in store.list(CWD)] == [mine.id]
    assert Path(mine.location).parent == tmp_path / "flat"


def test_import_file_copies_and_delete_removes_backups(jsonl_store, agent_dir, tmp_path):
    src = write_lines(tmp_path / "elsewhere" / "my-export.jsonl", [dict(V3[0], id="imported"), *V3[1:]])
    session = jsonl_store.import_file(src, cwd_override="/tmp/work")
    assert Path(session.location) == project_dir(agent_dir) / "my-export.jsonl" and session.cwd == "/tmp/work"
    assert jsonl_store.open("imported").leaf_id == "a0000006"
    backup = Path(session.location + ".2026-07-13T10-00-00-000Z.compact.bak")
    backup.write_text("x")
    jsonl_store.delete("imported")
    assert not backup.exists() and not Path(session.location).exists() and src.exists()


def test_fsync_never_policy_still_writes(agent_dir):
    store = JsonlStore(agent_dir, fsync="never", cwd=CWD)
    session = chat(store, 2)
    assert len(store.open(session.id).entries) == len(session.entries)
