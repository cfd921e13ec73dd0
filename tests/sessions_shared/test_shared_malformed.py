"""One malformed entry no longer bricks a session (issue 24), in either store: an assistant
``content`` that is a string, a text block whose ``text`` is 5, a message that is not an object, and
a record that is not JSON at all. Before: ``get_session_stats`` failed and every prompt ended with a
Python AttributeError. Now the session loads with those entries repaired in memory (the store's copy
is left as it is), says so once on stderr, answers every read, and a prompt through a real provider
adapter (Anthropic's wire format from a local server) sends the repaired history and ends ``stop``.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from shared_helpers import STORES, chat, host, last_reply, pg_rows, stderr_of, stored

from atomic_host.testing_sse import SSEServer

sys.path.insert(0, str(Path(__file__).parent.parent / "agent"))
from agent_frames import TEXT_REPLIES, models_json


def _break(entries: list[dict[str, Any]]) -> list[Any]:
    """The issue's three malformed entries: the first reply's content a string, the second reply's
    text 5, the second prompt's message not an object (a copy; ids and parents kept)."""
    out = json.loads(json.dumps(entries))
    messages = [e for e in out if e.get("type") == "message"]
    first_reply, second_prompt, second_reply = messages[1], messages[2], messages[3]
    first_reply["message"]["content"] = "re: one"
    second_reply["message"]["content"] = [{"type": "text", "text": 5}]
    second_prompt["message"] = "oops"
    return out


def _rewrite(location: str, entries: list[Any]) -> None:
    """Put ``entries`` in the store by hand, plus one record that is not JSON at the end."""
    if location.startswith("postgres:"):
        session_id = location.rpartition("#")[2]
        pg_rows("DELETE FROM atomic_entries WHERE session_id = %s", session_id)
        for seq, text in enumerate([*map(json.dumps, entries), '{"type":"message",']):
            pg_rows("INSERT INTO atomic_entries VALUES (%s, %s, %s)", session_id, seq, text)
        pg_rows("UPDATE atomic_sessions SET next_seq = %s WHERE id = %s", len(entries) + 1, session_id)
        return
    if not location.startswith("sqlite:"):
        path = Path(location)
        header = path.read_text().split("\n", 1)[0]
        path.write_text(header + "\n" + "".join(json.dumps(e) + "\n" for e in entries) + '{"type":"message",\n')
        return
    db, _, session_id = location[len("sqlite:") :].rpartition("#")
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("DELETE FROM entries WHERE session_id = ?", (session_id,))
        rows = [(session_id, seq, json.dumps(e)) for seq, e in enumerate(entries)]
        rows.append((session_id, len(entries), '{"type":"message",'))
        conn.executemany("INSERT INTO entries VALUES (?, ?, ?)", rows)
        conn.execute("UPDATE sessions SET next_seq = ? WHERE id = ?", (len(rows), session_id))


@pytest.mark.parametrize("store", STORES)
async def test_a_session_with_malformed_entries_loads_answers_and_goes_on(
    tmp_path: Path, store: tuple[str, ...]
) -> None:
    async with host(tmp_path, "a", *store) as a:
        await chat(a, "one", "two")
        owner = await a.client.call("get_state")
    broken = _break(stored(owner["sessionLocation"]))
    _rewrite(owner["sessionLocation"], broken)
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir(exist_ok=True)  # a postgres host writes nothing there
    with SSEServer() as server:
        (agent_dir / "models.json").write_text(models_json(server.base_url, ["anthropic-messages"]))
        (agent_dir / "settings.json").write_text(json.dumps({"sessionSummary": {"enabled": False}}))
        server.enqueue(TEXT_REPLIES["anthropic-messages"]("three it is"))
        async with host(tmp_path, "b", *store) as b:
            c = b.client
            assert await c.call("switch_session", sessionId=owner["sessionId"]) == {"cancelled": False}
            for _ in range(2):  # every read answers, again and again
                stats = await c.call("get_session_stats")
                assert (stats["userMessages"], stats["assistantMessages"]) == (1, 2)
                texts = [m["content"][0]["text"] for m in await c.get_messages()]
                assert texts == ["one", "re: one", "5"]
                entries = (await c.call("get_entries"))["entries"]
                assert [e["message"] for e in entries if e["type"] == "message"].count("oops") == 1  # left as it is
                assert (await c.call("get_tree"))["tree"]
                assert await c.call("get_last_assistant_text") == {"text": "5"}
            await c.call("set_model", provider="local-anthropic-messages", modelId="m1")  # the branch's was faux
            events = await c.prompt_and_wait("three")
            assert last_reply(events)["stopReason"] == "stop"
            assert len(server.requests) == 1
            sent = server.requests[0].body["messages"]  # the prompt's request (summaries are off)
            assert [m["role"] for m in sent] == ["user", "assistant", "assistant", "user"]
            assert sent[1]["content"] == [{"type": "text", "text": "re: one"}]
            assert sent[2]["content"] == [{"type": "text", "text": "5"}]
    held = stored(owner["sessionLocation"])
    assert held[: len(broken)] == broken  # the store's copy of the bad entries is left as it was
    assert [e["message"]["role"] for e in held[len(broken) :] if e["type"] == "message"] == ["user", "assistant"]
    log = stderr_of(tmp_path, "b")
    assert log.count("3 malformed entries (in memory; the stored copy is unchanged)") == 1, log
    assert "assistant content is a string (made a text block)" in log
    assert "text block: text is a number (made text)" in log
    assert "the message is not an object (left out of the context)" in log
    assert log.count("skipped 1 unreadable record(s)") == 1, log
