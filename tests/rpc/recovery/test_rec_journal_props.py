"""The queue journal is read back from a file anyone may have edited: ``pending_deliveries``
never raises on hostile entries, never returns a settled, foreign or delivered record, and keeps
delivery order; a host whose session file holds corrupt journal entries still recovers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from rec_helpers import MODEL, QUIET, answer, provider, session_files, sigkill, stalled, until, user_texts

from atomic_host import testing_sse as sse
from atomic_host.engine.queues import JOURNAL, KINDS, pending_deliveries
from atomic_host.testing import start_host

SESSION = "s-1"
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)
ids = st.sampled_from(["a1", "a2", "a3", "a4", "a5", "a6"])
messages = st.builds(
    lambda text, ts: {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts},
    st.text(max_size=5),
    st.integers(0, 3),
)


def queued(entry_id: str, kind: str, message: Any, session: Any = SESSION) -> dict[str, Any]:
    data = {"op": "queued", "kind": kind, "session": session, "message": message}
    return {"type": "custom", "customType": JOURNAL, "id": entry_id, "data": data}


def settled(entry_ids: Any) -> dict[str, Any]:
    return {"type": "custom", "customType": JOURNAL, "id": "z", "data": {"op": "settled", "ids": entry_ids}}


hostile_entry = st.one_of(
    json_values,
    st.builds(queued, ids, st.sampled_from(["steer", "followUp", "x", None]), json_values | messages, json_values),
    st.builds(settled, json_values | st.lists(ids | json_values, max_size=3)),
    st.builds(lambda m: {"type": "message", "message": m, "id": "m"}, json_values | messages),
    st.builds(lambda d: {"type": "custom", "customType": JOURNAL, "id": "q", "data": d}, json_values),
    st.builds(lambda c, d: {"type": "custom_message", "customType": c, "content": d}, json_values, json_values),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(hostile_entry, max_size=25))
def test_hostile_entries_never_raise(entries: list[Any]) -> None:
    result = pending_deliveries(entries, SESSION)
    assert all(p.kind in ("steer", "followUp") and p.message["role"] in ("user", "custom") for p in result)
    kinds = [p.kind for p in result]
    assert kinds == sorted(kinds, key=lambda k: k != "steer")  # steering first


ops = st.lists(
    st.tuples(st.sampled_from(["queue", "settle", "deliver", "foreign"]), st.sampled_from(KINDS), messages),
    max_size=15,
)


@settings(max_examples=300, deadline=None)
@given(ops)
def test_pending_is_exactly_what_was_queued_and_not_settled_or_delivered(script: list[Any]) -> None:
    """A model of the journal: queue / settle the oldest / deliver the oldest / another session's record."""
    entries: list[dict[str, Any]] = []
    live: list[tuple[str, str, dict[str, Any]]] = []
    for n, (op, kind, message) in enumerate(script):
        entry_id = f"e{n}"
        if op == "queue":
            entries.append(queued(entry_id, kind, message))
            live.append((entry_id, kind, message))
        elif op == "foreign":
            entries.append(queued(entry_id, kind, message, session="another"))
        elif op == "settle" and live:
            entries.append(settled([live.pop(0)[0]]))
        elif op == "deliver" and live:
            # delivery of the oldest pending record with this message (as the reader matches them)
            first = live[0]
            same = next(item for item in live if item[2] == first[2])
            live.remove(same)
            entries.append({"type": "message", "id": f"m{n}", "message": dict(first[2])})
    expected = [i for i, k, _m in live if k == "steer"] + [i for i, k, _m in live if k == "followUp"]
    assert [p.journal_id for p in pending_deliveries(entries, SESSION)] == expected
    assert pending_deliveries(entries, SESSION, exclude=set(expected)) == []


def test_deeply_nested_content_is_skipped() -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    entries = [queued("a1", "steer", {"role": "user", "content": [{"type": "text", "text": "ok"}], "timestamp": 1})]
    entries.append({"type": "message", "id": "m", "message": {"role": "user", "content": deep}})
    entries.append(queued("a2", "steer", {"role": "custom", "customType": "c", "content": [{"deep": deep}]}))
    assert [p.journal_id for p in pending_deliveries(entries, SESSION)] == ["a1"]


async def test_corrupt_journal_entries_do_not_break_recovery(tmp_path: Path) -> None:
    with sse.SSEServer() as server:
        provider(tmp_path / "agent", server.base_url)
        server.enqueue(answer())
        server.enqueue(stalled())
        async with start_host(*MODEL, base=tmp_path, settings=QUIET) as host:
            c = host.client
            assert (await c.prompt_and_wait("first")).ok
            await c.call("prompt", message="second")
            await until(lambda: len(server.requests) == 2)
            await c.call("follow_up", message="the real one")
            await sigkill(c)
        (path,) = session_files(tmp_path / "agent")
        last = json.loads(path.read_text(encoding="utf-8").splitlines()[-1])
        session, message = last["data"]["session"], last["data"]["message"]
        bad = [
            {"op": "queued", "kind": "steer", "message": "not a message"},
            {"op": "queued", "kind": "sideways", "session": session, "message": message},
            {"op": "settled", "ids": [None, 7, {"x": 1}]},
            {"op": "queued", "kind": "steer", "session": session, "message": {"role": "assistant"}},
            [1, 2, 3],
            "junk",
        ]
        with path.open("a", encoding="utf-8") as fh:
            parent = last["id"]
            for n, data in enumerate(bad):
                entry = {"type": "custom", "customType": JOURNAL, "id": f"bad{n:05d}", "parentId": parent, "data": data}
                entry["timestamp"] = last["timestamp"]
                fh.write(json.dumps(entry) + "\n")
                parent = entry["id"]
            fh.write("{not json at all\n")
        server.enqueue(answer())
        async with start_host("--continue", *MODEL, base=tmp_path, settings=QUIET) as host:
            c = host.client
            mark = len(c.events)
            report = await c.call("start_pending_recovery")
            assert report["replayed"] == 1
            await c.wait_for_idle(after=mark)
            assert user_texts(server.requests[-1].body) == ["first", "second", "the real one"]
            host.assert_protocol_lines()
