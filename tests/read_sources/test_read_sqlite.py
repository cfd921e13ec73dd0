"""read on SQLite databases through the real host: schema, table pages, read-only queries, never a write."""

from __future__ import annotations

import hashlib
import sqlite3
import time
from pathlib import Path

from read_helpers import read

from atomic_host.testing import start_host


def make_db(path: Path) -> None:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, note TEXT)")
    con.executemany(
        "INSERT INTO users (name, note) VALUES (?, ?)",
        [(f"user{i}", "a|b\nc" if i == 1 else None) for i in range(1, 251)],
    )
    con.execute("CREATE VIEW first_ten AS SELECT id, name FROM users WHERE id <= 10")
    con.commit()
    con.close()


async def test_schema_rows_pages_and_queries(tmp_path: Path) -> None:
    async with start_host(base=tmp_path / "h") as host:
        db = host.cwd / "app.db"
        make_db(db)
        digest = hashlib.sha256(db.read_bytes()).hexdigest()
        r = await read(
            host,
            "app.db",
            "app.db:users",
            "app.db:users:249-300",
            "app.db/first_ten",
            "app.db?q=SELECT name, length(name) AS n FROM users WHERE id IN (2, 3) ORDER BY id",
            "app.db:usr",
            "app.db?q=DELETE FROM users",
            "app.db?q=ATTACH DATABASE 'other.db' AS o",
            "app.db?q=SELECT 1; DROP TABLE users",
            "app.db?q=PRAGMA journal_mode=WAL",
            "app.db?q=SELECT nope FROM users",
        )
        host.assert_protocol_lines()
        assert hashlib.sha256(db.read_bytes()).hexdigest() == digest  # never written
        assert not (host.cwd / "other.db").exists()
        assert sorted(p.name for p in host.cwd.iterdir()) == ["app.db"]  # no -wal, -shm or journal left
    assert r[0]["text"] == (
        "[app.db] SQLite database, 2 tables/views\n"
        "table users (250 rows): id INTEGER PK, name TEXT, note TEXT\n"
        "view first_ten (10 rows): id INTEGER, name TEXT\n"
        "Rows: read app.db:<table> (pages of 100, e.g. app.db:<table>:101-200). "
        "Query: read app.db?q=SELECT … (read-only)."
    )
    rows = r[1]["text"].split("\n")
    assert rows[:5] == [
        "[app.db:users] 250 rows, showing 1-100",
        "| id | name | note |",
        "| --- | --- | --- |",
        "| 1 | user1 | a\\|b\\nc |",
        "| 2 | user2 | NULL |",
    ]
    assert rows[-1] == "[Showing rows 1-100 of 250. Continue with app.db:users:101-200.]" and len(rows) == 105
    assert r[2]["text"] == (
        "[app.db:users] 250 rows, showing 249-250\n| id | name | note |\n| --- | --- | --- |\n"
        "| 249 | user249 | NULL |\n| 250 | user250 | NULL |"
    )
    assert r[3]["text"].startswith("[app.db:first_ten] 10 rows, showing 1-10\n| id | name |")
    assert r[4]["text"] == "[app.db?q] 2 rows\n| name | n |\n| --- | --- |\n| user2 | 5 |\n| user3 | 5 |"
    assert r[5]["isError"] and r[5]["text"] == "No table or view 'usr' in app.db. Did you mean: users?"
    refused = "Only reading queries are allowed (SELECT, WITH … SELECT); nothing is written"
    assert r[6] == {"text": refused, "images": [], "isError": True}
    assert r[7]["text"] == refused and r[9]["text"] == refused
    assert r[8]["isError"] and r[8]["text"].startswith("SQLite error: You can only execute one statement at a time")
    assert r[10]["isError"] and r[10]["text"] == "SQLite error: no such column: nope"


async def test_endless_query_stops_at_the_time_bound(tmp_path: Path) -> None:
    async with start_host(base=tmp_path / "h", settings={"read": {"timeoutSeconds": 1}}) as host:
        make_db(host.cwd / "app.db")
        endless = "app.db?q=WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
        started = time.monotonic()
        r = await read(host, endless)
        assert time.monotonic() - started < 15
        state = await host.client.get_state()  # the host keeps serving
    assert r[0]["isError"] and r[0]["text"] == "Reading app.db took longer than 1 s; stopped"
    assert state["isStreaming"] is False
