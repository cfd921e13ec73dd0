"""The database stores' listing is read from rows kept on append (issue 26): the ``info`` column
holds each session's record ready made, so ``list`` parses each one once and does no per-session
work after that; whatever the column holds (a database written before it, a hand edit: NULL,
not JSON, not an object, bytes, huge, deeply nested) the listing is the one the sessions'
headers and states give, and the column is made again."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from session_helpers import CWD

from builtin_plugins.stores import open_builtin_store as open_store

KINDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.slow)]


def chat(store: Any, text: str, name: str | None = None) -> str:
    session = store.new_session(CWD)
    session.append_message({"role": "user", "content": text, "timestamp": 1})
    session.append_message({"role": "assistant", "content": [], "provider": "p", "model": "m", "stopReason": "stop",
                            "timestamp": 2})  # fmt: skip
    if name is not None:
        session.append_session_info(name)
    session.close()
    return session.id


class Rows:
    """Reaches into a store's ``sessions`` table, as an operator with a SQL prompt would."""

    def __init__(self, kind: str, store: Any) -> None:
        self.kind, self.store = kind, store

    def execute(self, sql: str, *params: Any) -> list[Any]:
        if self.kind == "sqlite":
            with self.store._lock:
                rows = self.store.db.execute(sql.replace("%s", "?"), params).fetchall()
                self.store.db.commit()
                return rows
        import psycopg

        with psycopg.connect(self.store._conninfo, autocommit=True) as conn:
            cur = conn.execute(sql.replace("sessions", "atomic_sessions"), params)
            return cur.fetchall() if cur.description else []

    def set_info(self, session_id: str, value: Any) -> None:
        self.execute("UPDATE sessions SET info = %s WHERE id = %s", value, session_id)

    def drop_listing_columns(self) -> None:
        """What a database written before the ``info``/``sort_ms`` columns looks like."""
        if self.kind == "sqlite":
            self.execute("DROP INDEX sessions_listing")
        self.execute("ALTER TABLE sessions DROP COLUMN info")
        self.execute("ALTER TABLE sessions DROP COLUMN sort_ms")


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "postgres":  # a real server (tests/pg_helpers.py), a schema of this test's own
        monkeypatch.setenv("ATOMIC_DATABASE_URL", request.getfixturevalue("postgres_server").fresh_url())
    return str(request.param)


def test_a_database_written_before_the_listing_columns_lists_the_same(kind: str, tmp_path: Path) -> None:
    store = open_store(kind, tmp_path / "agent", None, CWD)
    for i in range(5):
        chat(store, f"hello {i}", name=f"n{i}" if i % 2 else None)
    expected = store.list(CWD)
    assert len(expected) == 5 and {i.get("name") for i in expected} == {None, "n1", "n3"}
    store.close()
    rows = Rows(kind, open_store(kind, tmp_path / "agent", None, CWD))
    rows.drop_listing_columns()
    rows.store.close()
    again = open_store(kind, tmp_path / "agent", None, CWD)  # adds the columns, fills them in
    try:
        assert again.list(CWD) == expected
        assert Rows(kind, again).execute("SELECT count(*) FROM sessions WHERE info IS NULL") == [(0,)]
    finally:
        again.close()


def _is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


HOSTILE = st.one_of(
    st.none(),
    st.text(max_size=50).filter(lambda t: not _is_object(t)),
    st.sampled_from(["null", "[]", "3", '"x"', "{", '{"path":"",', '{"path":""}x', "[" * 5000 + "]" * 5000]),
    st.integers(min_value=0, max_value=40).map(lambda n: '{"path":"","a":' + "[" * n),
    st.binary(max_size=30),
    st.just("x" * 1_000_000),
)
"""What a hand edit may leave in ``info`` that is no record: the listing must make it again."""


@settings(max_examples=25, deadline=None)
@given(values=st.lists(HOSTILE, min_size=1, max_size=3))
def test_whatever_the_info_column_holds_the_listing_is_the_sessions_own(values: list[Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store("sqlite", Path(tmp), None, CWD)
        try:
            ids = [chat(store, f"hello {i}") for i in range(4)]
            expected = store.list(CWD)
            rows = Rows("sqlite", store)
            for session_id, value in zip(ids, values, strict=False):
                rows.set_info(session_id, value)
            assert store.list(CWD) == expected  # the cached records are not trusted over the rows
            assert open_store("sqlite", Path(tmp), None, CWD).list(CWD) == expected  # nor needed
        finally:
            store.close()


def test_a_hand_edited_info_is_made_again(kind: str, tmp_path: Path) -> None:
    store = open_store(kind, tmp_path / "agent", None, CWD)
    try:
        ids = [chat(store, f"hello {i}") for i in range(3)]
        expected = store.list(CWD)
        rows = Rows(kind, store)
        for session_id, value in zip(ids, (None, "not json", "[1, 2]"), strict=True):
            rows.set_info(session_id, value)
        assert store.list(CWD) == expected
        assert rows.execute("SELECT count(*) FROM sessions WHERE info IS NULL OR info = 'not json'") == [(0,)]
        assert store.list(CWD) == expected  # and again, from the rows made again
    finally:
        store.close()
