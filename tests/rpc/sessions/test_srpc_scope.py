"""Session ids never reach outside the current project's store (issue 8): ``switch_session`` and
``delete_session`` by the id of another project's session find nothing and touch nothing; ids that
are not session ids are refused; a symlink in the store pointing outside is never followed."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import pytest
from pg_helpers import POSTGRES_STORE
from srpc_helpers import chat, error_of, state

BACKENDS = [pytest.param((), id="jsonl"), pytest.param(("--session-store", "sqlite"), id="sqlite"), POSTGRES_STORE]


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its size and mtime: what "touched nothing" is checked against."""
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = Path(dirpath) / name
            st = path.lstat()
            out[str(path.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return out


@pytest.mark.parametrize("backend", BACKENDS)
async def test_another_projects_session_cannot_be_opened_or_deleted_by_id(
    srpc_host: Any, base: Path, backend: tuple[str, ...]
) -> None:
    other_cwd, home_cwd = base / "project-b", base / "project-a"
    other_cwd.mkdir()
    home_cwd.mkdir()
    async with srpc_host(*backend, cwd=other_cwd) as host:
        await chat(host, "secret plans of project b")
        foreign = await state(host.client)
    async with srpc_host(*backend, cwd=home_cwd) as host:
        c = host.client
        await chat(host, "project a")
        mine = await state(c)
        assert await error_of(c, "switch_session", sessionId=foreign["sessionId"]) == (
            f"Session not found: {foreign['sessionId']}"
        )
        before = _tree(host.agent_dir)
        assert await c.call("delete_session", sessionId=foreign["sessionId"]) is None  # unknown here: a no-op
        assert {k: v for k, v in _tree(host.agent_dir).items() if "sessions.db" not in k} == {
            k: v for k, v in before.items() if "sessions.db" not in k
        }
        assert (await state(c))["sessionId"] == mine["sessionId"]
        listed = {s["id"] for s in (await c.call("list_sessions"))["sessions"]}
        assert foreign["sessionId"] not in listed
    async with srpc_host(*backend, cwd=other_cwd) as host:  # still there for its own project
        c = host.client
        assert await c.call("switch_session", sessionId=foreign["sessionId"]) == {"cancelled": False}
        texts = [m for m in (await c.get_messages()).messages if m["role"] == "user"]
        assert "secret plans of project b" in str(texts)
        assert await c.call("delete_session", sessionId=mine["sessionId"]) is None
    async with srpc_host(*backend, cwd=home_cwd) as host:
        assert await host.client.call("switch_session", sessionId=mine["sessionId"]) == {"cancelled": False}


BAD_IDS = ["../x", "..", "a/b", "/etc/passwd", "x\x00y", "x\\y", "~", " ", "a..b", ".hidden", "-x"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_ids_that_are_not_session_ids_are_refused_without_touching_anything(
    srpc_host: Any, base: Path, backend: tuple[str, ...]
) -> None:
    bait = base / "bait.jsonl"
    bait.write_text('{"type":"session","version":3,"id":"bait","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}\n')
    async with srpc_host(*backend) as host:
        c = host.client
        await chat(host, "keep me")
        before, bait_before = _tree(host.agent_dir), bait.read_bytes()
        for bad in [*BAD_IDS, str(bait), "../../bait"]:
            assert (await error_of(c, "switch_session", sessionId=bad)).startswith("Invalid session id: "), bad
            assert (await error_of(c, "delete_session", sessionId=bad)).startswith("Invalid session id: "), bad
        assert (await state(c))["isStreaming"] is False
        after = _tree(host.agent_dir)
        assert {k for k in after if "sessions.db" not in k} == {k for k in before if "sessions.db" not in k}
        assert bait.read_bytes() == bait_before


async def test_a_symlink_in_the_store_pointing_outside_is_never_followed(srpc_host: Any, base: Path) -> None:
    outside = base / "outside"
    outside.mkdir()
    sid = str(uuid.uuid4())
    target = outside / "victim.jsonl"
    target.write_text(
        f'{{"type":"session","version":3,"id":"{sid}","timestamp":"2026-01-01T00:00:00Z","cwd":"{base}"}}\n'
    )
    async with srpc_host() as host:
        c = host.client
        await chat(host, "hello")
        store_dir = Path((await state(c))["sessionLocation"]).parent
        link = store_dir / f"2026-01-01T00-00-00-000Z_{sid}.jsonl"
        link.symlink_to(target)
        assert await error_of(c, "switch_session", sessionId=sid) == f"Session not found: {sid}"
        assert await c.call("delete_session", sessionId=sid) is None
        assert target.exists() and link.is_symlink()
        assert sid not in {s["id"] for s in (await c.call("list_sessions"))["sessions"]}
