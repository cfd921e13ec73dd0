"""The SQLite store's listing keeps each session's info from the last listing while its row is
unchanged: whatever this store or another connection to the same database did in between
(new sessions, appends, names, summaries, deletes, imports over an id), a listing equals the
one a store that never listed before reads (hypothesis), and what callers get is theirs to change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from session_helpers import CWD, assistant, user

from atomic_host.kit.sessions.errors import SessionFileGone
from atomic_host.kit.sessions.store import new_header
from builtin_plugins.stores import open_builtin_store as open_store

OTHER_CWD = "/home/u/other"

operation = st.one_of(
    st.tuples(st.just("new"), st.booleans(), st.sampled_from([CWD, OTHER_CWD])),
    st.tuples(st.just("append"), st.integers(0, 99), st.booleans()),
    st.tuples(st.just("name"), st.integers(0, 99), st.sampled_from(["", "  n  ", "a name ✓"])),
    st.tuples(st.just("summary"), st.integers(0, 99), st.booleans()),
    st.tuples(st.just("delete"), st.integers(0, 99), st.booleans()),
    st.tuples(st.just("reimport"), st.integers(0, 99), st.booleans()),
    st.tuples(st.just("list"), st.booleans()),
)


def _listings(store: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return store.list(CWD), store.list_all()


def _fresh_listings(agent_dir: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    fresh = open_store("sqlite", agent_dir, None, CWD)
    try:
        return _listings(fresh)
    finally:
        fresh.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(operation, max_size=20))
def test_a_listing_equals_a_fresh_stores_whatever_happened(tmp_path_factory: Any, ops: Any) -> None:
    agent_dir = tmp_path_factory.mktemp("listing") / "agent"
    mine, other = (open_store("sqlite", agent_dir, None, None, fsync="never") for _ in range(2))
    sessions: list[Any] = []
    try:
        for op in ops:
            kind = op[0]
            store = other if op[-1] is True and kind != "new" else mine  # another connection's writes
            if kind == "new":
                session = (other if op[1] else mine).new_session(op[2])
                session.append_message(user("first question"))
                session.append_message(assistant())
                sessions.append(session)
            elif kind == "list":
                assert _listings(mine) == _fresh_listings(agent_dir)
            elif sessions:
                session = sessions[op[1] % len(sessions)]
                if kind in ("append", "name", "summary"):
                    # a write to a session deleted while open fails and changes nothing (issue 24)
                    gone = not mine.has(session.id)
                    try:
                        if kind == "append":
                            session.append_message(user("another"))
                        elif kind == "name":
                            session.append_session_info(op[2])
                        else:
                            leaf = session.leaf_id
                            session.append("session_summary", summary="what happened", summarizedThroughId=leaf)
                    except SessionFileGone:
                        assert gone
                    else:
                        assert not gone
                elif kind == "delete" and store.has(session.id):
                    store.delete(session.id)
                elif kind == "reimport":
                    header = {**new_header(session.header["cwd"]), "id": session.id}
                    store.put(header, session.entries[:1], overwrite=True).close()
        assert _listings(mine) == _fresh_listings(agent_dir)
    finally:
        mine.close()
        other.close()


def test_callers_get_copies(agent_dir: Path) -> None:
    store = open_store("sqlite", agent_dir, None, CWD)
    try:
        session = store.new_session(CWD)
        session.append_message(user("hello"))
        session.append_message(assistant())
        first = store.list(CWD)
        first[0]["firstMessage"] = "changed by the caller"
        assert store.list(CWD)[0]["firstMessage"] == "hello"
    finally:
        store.close()
