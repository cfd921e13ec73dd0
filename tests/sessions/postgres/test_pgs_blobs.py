"""Nothing of a session on the local disk when its store is not a file store (issue 26): on the
``postgres`` store a compaction backup and an oversized tool result are kept in the database
(``atomic_blobs``), never as ``<location>.<stamp>.bak`` in the working directory (where a
``postgres:`` location used to put it, mode 0644); file-store backups are owner-only."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from pgs_helpers import BIG_TEXT, BIG_TOOL, UID, blob, chat, entries, pg_host, tree, user_texts

from atomic_host.testing import Host, read_jsonl, start_host

PROMPT = "\n".join(f"requirement {i}" for i in range(1, 31))


async def _seed(host: Host) -> None:
    host.faux.push("first answer")
    await host.client.prompt_and_wait(PROMPT)
    host.faux.push("second answer")
    await host.client.prompt_and_wait("now the second thing")


@pytest.mark.slow
async def test_backup_and_oversized_result_are_kept_in_the_database(pg_url: str, tmp_path: Path) -> None:
    ext = tmp_path / "big_ext.py"
    ext.write_text(BIG_TOOL)
    work = tmp_path / "work"
    work.mkdir()
    before = tree(work)
    async with pg_host(pg_url, "-e", str(ext), base=tmp_path) as host:
        c = host.client
        await _seed(host)
        state = await c.get_state()
        session_id, location = state["sessionId"], state["sessionLocation"]
        assert location.startswith("postgres://") and location.endswith("#" + session_id)
        stored_before = entries(pg_url, session_id)
        host.faux.push("1,5\n9,12")
        result = await c.call("compact")
        backup = result["backupPath"]
        assert backup.startswith(location + "/") and backup.endswith(".compact.bak")
        data = blob(pg_url, session_id, backup[len(location) + 1 :])
        assert data is not None
        lines = [line for line in data.decode().split("\n") if line]
        assert len(lines) == 1 + len(stored_before)  # the header and every entry before the compaction
        assert read_jsonl_text(data)[1:] == stored_before

        host.faux.push({"content": [{"type": "toolCall", "id": "call/1", "name": "big_result", "arguments": {}}]},
                       "seen it")  # fmt: skip
        events = await c.prompt_and_wait("make it big")
        end = next(e for e in events if e.get("type") == "tool_execution_end")
        text = end["result"]["content"][0]["text"]
        kept = f"{location}/tool-results/call_1.txt"
        assert f"Full output kept in the session store as {kept} (not a file" in text
        assert end["result"]["details"]["persistedOutput"] == {"path": None, "chars": len(BIG_TEXT), "stored": kept}
        assert blob(pg_url, session_id, "tool-results/call_1.txt") == BIG_TEXT.encode()
    # nothing of the session on the local disk: not in the cwd, the agent dir, nor the temp tree
    assert tree(work) == before
    assert not (tmp_path / "agent" / "sessions").exists()
    assert not (tmp_path / "tmp" / f"atomic-{UID}" / session_id / "tool-results").exists()
    assert not list(tmp_path.rglob("*.bak"))
    # another host (its own agent dir, the same project) continues the session from the database
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    async with pg_host(pg_url, "--session", session_id, base=elsewhere, cwd=work) as other:
        assert "now the second thing" in str((await other.client.get_messages()).messages)
        await chat(other, "continued elsewhere")
    assert user_texts(entries(pg_url, session_id))[-1] == "continued elsewhere"


def read_jsonl_text(data: bytes) -> list[dict]:
    import json

    return [json.loads(line) for line in data.decode().split("\n") if line]


async def test_a_jsonl_backup_is_owner_only(tmp_path: Path) -> None:
    async with start_host(base=tmp_path) as host:
        await _seed(host)
        host.faux.push("1,5\n9,12")
        backup = Path((await host.client.call("compact"))["backupPath"])
        assert stat.S_IMODE(backup.stat().st_mode) == 0o600
        session = Path((await host.client.get_state())["sessionLocation"])
        assert read_jsonl(backup) == read_jsonl(session)[:-1]
        host.assert_protocol_lines()
