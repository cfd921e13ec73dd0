"""Store safety through the host: path-like ids and symlinks refused, private modes, and a
session written in the reference format reopened, continued and still valid."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from pg_helpers import POSTGRES_STORE
from srpc_helpers import chat, error_of, mode, read_jsonl, state

from atomic_host.kit.sessions.jsonl import load_jsonl

BAD_IDS = ["../escape", "../../etc/passwd", "/etc/passwd", "a/b", ".hidden", "x..", ""]

# A v3 session as the reference writer produces it (compact JSON, key order type,id,parentId,timestamp).
REFERENCE_V3 = [
    {
        "type": "session",
        "version": 3,
        "id": "019fdf86-cf98-7327-8a73-21365028f6ae",
        "timestamp": "2026-07-13T10:00:00.000Z",
        "cwd": "CWD",
    },
    {
        "type": "model_change",
        "id": "1a2b3c4d",
        "parentId": None,
        "timestamp": "2026-07-13T10:00:00.001Z",
        "provider": "faux",
        "modelId": "faux-1",
    },
    {
        "type": "thinking_level_change",
        "id": "2b3c4d5e",
        "parentId": "1a2b3c4d",
        "timestamp": "2026-07-13T10:00:00.002Z",
        "thinkingLevel": "low",
    },
    {
        "type": "message",
        "id": "3c4d5e6f",
        "parentId": "2b3c4d5e",
        "timestamp": "2026-07-13T10:00:01.000Z",
        "message": {
            "role": "user",
            "content": [{"type": "text", "text": "fix the parser"}],
            "timestamp": 1783936801000,
        },
    },
    {
        "type": "message",
        "id": "4d5e6f70",
        "parentId": "3c4d5e6f",
        "timestamp": "2026-07-13T10:00:02.000Z",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "Done."}],
            "api": "faux",
            "provider": "faux",
            "model": "faux-1",
            "usage": {
                "input": 10,
                "output": 2,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 12,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": "stop",
            "timestamp": 1783936802000,
        },
    },
    {
        "type": "label",
        "id": "5e6f7081",
        "parentId": "4d5e6f70",
        "timestamp": "2026-07-13T10:00:03.000Z",
        "targetId": "3c4d5e6f",
        "label": "start",
    },
    {
        "type": "context_window_change",
        "id": "6f708192",
        "parentId": "5e6f7081",
        "timestamp": "2026-07-13T10:00:04.000Z",
        "contextWindow": 200000,
    },
]


@pytest.mark.parametrize(
    "store", [pytest.param((), id="jsonl"), pytest.param(("--session-store", "sqlite"), id="sqlite"), POSTGRES_STORE]
)
async def test_path_like_ids_are_refused(srpc_host: Any, store: tuple[str, ...]) -> None:
    async with srpc_host(*store) as host:
        c = host.client
        await chat(host, "hello")
        for bad in BAD_IDS:
            if not bad:
                continue
            assert "Session not found" in await error_of(c, "switch_session", sessionId=bad) or "nvalid" in (
                await error_of(c, "switch_session", sessionId=bad)
            )
            response = await c.request({"type": "delete_session", "sessionId": bad})
            assert response["success"] is False, (bad, response)
        assert len((await c.call("list_sessions"))["sessions"]) == 1
        assert (await state(c))["messageCount"] == 2


async def test_symlinks_out_of_the_store_are_refused(srpc_host: Any, base: Path) -> None:
    async with srpc_host() as host:
        await chat(host, "real")
        st = await state(host.client)
    store_dir = Path(st["sessionLocation"]).parent
    outside = base / "outside"
    outside.mkdir()
    secret = outside / "2026-01-01T00-00-00-000Z_secret-1.jsonl"
    records = read_jsonl(st["sessionLocation"])
    records[0]["id"] = "secret-1"
    secret.write_text("".join(json.dumps(r) + "\n" for r in records))
    (store_dir / secret.name).symlink_to(secret)
    (store_dir / "linked-dir").symlink_to(outside, target_is_directory=True)
    async with srpc_host() as host:
        c = host.client
        assert [s["id"] for s in (await c.call("list_sessions"))["sessions"]] == [st["sessionId"]]
        assert "Session not found" in await error_of(c, "switch_session", sessionId="secret-1")
        assert "Session not found" in await error_of(c, "switch_session", sessionPath=str(store_dir / secret.name))
        assert (await c.request({"type": "delete_session", "sessionId": "secret-1"}))["success"] is True
    assert secret.exists() and (store_dir / secret.name).is_symlink()


async def test_private_modes(srpc_host: Any, base: Path) -> None:
    async with srpc_host() as host:
        await chat(host, "private")
        st = await state(host.client)
    path = Path(st["sessionLocation"])
    assert mode(path) == 0o600
    assert mode(path.parent) == 0o700
    assert mode(base / "agent" / "sessions") == 0o700
    async with srpc_host("--session-store", "sqlite") as host:
        await chat(host, "private too")
    for db in (base / "agent").glob("sessions.db*"):
        assert mode(db) == 0o600, db


async def test_reference_v3_file_continues_and_stays_valid(srpc_host: Any, base: Path) -> None:
    cwd = str(base / "work")
    (base / "work").mkdir(exist_ok=True)
    records = [dict(r) for r in REFERENCE_V3]
    records[0] = {**records[0], "cwd": cwd}
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
    path = base / "2026-07-13T10-00-00-000Z_019fdf86-cf98-7327-8a73-21365028f6ae.jsonl"
    path.write_text(text)
    async with srpc_host("--session", str(path)) as host:
        c = host.client
        st = await state(c)
        assert st["sessionId"] == records[0]["id"] and st["thinkingLevel"] == "low"
        entries = (await c.call("get_entries"))["entries"]
        assert entries == records[1:]  # unknown entry types round-trip untouched
        tree = (await c.call("get_tree"))["tree"]
        assert tree[0]["children"][0]["children"][0]["label"] == "start"
        await chat(host, "and the test")
        new = (await c.call("get_entries", since=records[-1]["id"]))["entries"]
    data = path.read_text()
    assert data.startswith(text)  # nothing rewritten, only appended
    assert [e["id"] for e in new] == [r["id"] for r in read_jsonl(path)[len(records) :]]
    assert new[0]["parentId"] == records[-1]["id"]
    for line in data.splitlines():  # the reference writer's compact format
        assert line == json.dumps(json.loads(line), ensure_ascii=False, separators=(",", ":"))
    header, loaded, migrated = load_jsonl(path)
    assert header["version"] == 3 and not migrated and len(loaded) == len(records) - 1 + len(new)
    assert os.stat(path).st_size == len(data.encode())
