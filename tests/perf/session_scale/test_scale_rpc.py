"""Through the real ``atomic --mode rpc`` host: after every kind of change a client can make (a
label, a name, a prompt and its reply, a move in the tree, a switch away and back), the read
commands that answer from cached views answer what the session's stored entries say. Each read
is asked twice in a row too, so a stale cache and a fresh one must agree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scale_helpers import reference_fork_messages, reference_name, reference_totals, varied

from atomic_host.kit.sessions.tree import Session, build_tree
from atomic_host.testing import start_host
from builtin_plugins.stores import open_builtin_store

BACKENDS = [
    pytest.param("jsonl", id="jsonl"),
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.slow),
]


def stored_entries(agent_dir: Path, kind: str, cwd: str, session_id: str) -> list[dict[str, Any]]:
    """The session's entries as its store holds them (read by a second store object)."""
    store = open_builtin_store(kind, agent_dir, None, cwd, fsync="never")
    try:
        session = store.open(session_id)
        entries = list(session.entries)
        session.close()
        return entries
    finally:
        store.close()


def as_session(entries: list[dict[str, Any]]) -> Session:
    return Session({"type": "session", "id": "x", "cwd": "/"}, [json.loads(json.dumps(e)) for e in entries])


async def check_reads(client: Any, entries: list[dict[str, Any]]) -> None:
    """Every cached read against the definition computed from ``entries``, asked twice."""
    expected_session = as_session(entries)
    labels = {}
    for entry in entries:  # labels as the tree shows them: the latest label entry per target
        if entry["type"] == "label":
            if entry.get("label"):
                labels[entry["targetId"]] = (entry["label"], entry["timestamp"])
            else:
                labels.pop(entry["targetId"], None)
    tree = json.loads(json.dumps(build_tree(entries, labels)))
    totals = reference_totals(expected_session)
    for _ in range(2):
        got = await client.call("get_entries")
        assert got["entries"] == entries
        assert (await client.call("get_tree"))["tree"] == tree
        stats = await client.call("get_session_stats")
        assert (stats["userMessages"], stats["assistantMessages"], stats["toolResults"]) == (
            totals["counts"]["user"],
            totals["counts"]["assistant"],
            totals["counts"]["toolResult"],
        )
        assert (stats["toolCalls"], stats["totalMessages"]) == (totals["toolCalls"], totals["total"])
        assert stats["tokens"] == {**totals["tokens"], "total": sum(totals["tokens"].values())}
        assert stats["cost"] == pytest.approx(totals["cost"])
        assert stats.get("latestAssistantUsage") == totals["latest"]
        forks = (await client.call("get_fork_messages"))["messages"]
        assert forks == reference_fork_messages(expected_session)
        assert (await client.call("get_state")).get("sessionName") == reference_name(expected_session)


@pytest.mark.parametrize("kind", BACKENDS)
async def test_cached_reads_follow_every_change(
    tmp_path: Path, kind: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {}
    if kind == "postgres":  # a real server (tests/pg_helpers.py): this process and the host share a schema
        env["ATOMIC_DATABASE_URL"] = request.getfixturevalue("postgres_server").fresh_url()
        monkeypatch.setenv("ATOMIC_DATABASE_URL", env["ATOMIC_DATABASE_URL"])
    agent_dir, work = tmp_path / "agent", tmp_path / "work"
    work.mkdir()
    cwd = str(work.resolve())
    store = open_builtin_store(kind, agent_dir, None, cwd, fsync="never")
    long = varied(store.new_session(cwd), 40)
    short = varied(store.new_session(cwd), 1)
    long_id, short_id = long.id, short.id
    long.close()
    short.close()
    store.close()
    args = ("--session", long_id, *(("--session-store", kind) if kind != "jsonl" else ()))
    async with start_host(*args, base=tmp_path, cwd=work, env=env) as host:
        c = host.client

        async def check() -> list[dict[str, Any]]:
            entries = stored_entries(agent_dir, kind, cwd, long_id)
            await check_reads(c, entries)
            return entries

        entries = await check()
        await c.call("set_label", entryId=entries[5]["id"], label="picked ✓")
        entries = await check()
        await c.call("set_label", entryId=entries[5]["id"], label="")
        await c.call("set_session_name", name="  renamed \u2028 ")
        entries = await check()
        host.faux.push("re: one more")
        await c.prompt_and_wait("one more")
        entries = await check()
        await c.call("navigate_tree", targetId=entries[12]["id"])
        host.faux.push("re: on a branch")
        await c.prompt_and_wait("on a branch")
        entries = await check()
        await c.call("switch_session", sessionId=short_id)
        await c.call("switch_session", sessionId=long_id)
        await check()
    host.assert_protocol_lines()
