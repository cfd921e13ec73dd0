"""Helpers for the tests of one session touched by several host processes (issue 24).

Every host started by :func:`host` in one test shares the agent dir and the working directory (so
they see the same sessions) but has its own faux script, so each one's replies are its own.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from atomic_host.testing import Host, start_host

FILE_STORES = [pytest.param((), id="jsonl"), pytest.param(("--session-store", "sqlite"), id="sqlite")]
"""The built-in stores on the local disk, as command-line arguments."""
STORES = [*FILE_STORES, pytest.param(("--session-store", "postgres"), id="postgres", marks=pytest.mark.slow)]
"""Every built-in store that writes (PostgreSQL: a real server, tests/pg_helpers.py)."""
DATABASE: list[str] = []
"""The PostgreSQL URLs of a test on the ``postgres`` store: its schema, and another (for a host
that stands for another machine: ``host(..., elsewhere=True)``)."""


@contextlib.asynccontextmanager
async def host(
    root: Path,
    name: str,
    *args: str,
    agent_dir: Path | None = None,
    env: dict[str, str] | None = None,
    killed: bool = False,
    elsewhere: bool = False,
    **kw: Any,
) -> AsyncIterator[Host]:
    """A host on ``root``'s agent dir (or ``agent_dir``) and cwd, with its own faux script under
    ``root/name``; its stderr goes to ``root/name/stderr``, its stdout is checked on the way out
    (unless the test ``killed`` it: it may have printed nothing). A host ``elsewhere`` stands for
    another machine: it gets its own PostgreSQL schema (pass its own ``agent_dir`` for the others)."""
    own = root / name
    own.mkdir(parents=True, exist_ok=True)
    (root / "work").mkdir(exist_ok=True)
    (own / "tmp").mkdir(exist_ok=True)
    env = {"ATOMIC_CODING_AGENT_DIR": str(agent_dir or root / "agent"), "TMPDIR": str(own / "tmp"), **(env or {})}
    if DATABASE:
        env.setdefault("ATOMIC_DATABASE_URL", DATABASE[1 if elsewhere else 0])
    with (own / "stderr").open("ab") as err:
        async with start_host(*args, base=own, cwd=root / "work", env=env, stderr=err.fileno(), **kw) as h:
            yield h
        if not killed:
            h.assert_protocol_lines()


def stderr_of(root: Path, name: str) -> str:
    return (root / name / "stderr").read_text(errors="replace")


async def chat(h: Host, *texts: str) -> list[dict[str, Any]]:
    """One prompt per text, answered ``re: <text>``; the events of the last one."""
    events: list[dict[str, Any]] = []
    for text in texts:
        h.faux.push(f"re: {text}")
        events = await h.client.prompt_and_wait(text)
    return events


def last_reply(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The last assistant ``message_end`` of a run."""
    return [e for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"][-1]["message"]


def stored(location: str, *, elsewhere: bool = False) -> list[dict[str, Any]]:
    """The session's entries as the store holds them (the JSONL file's records after the header,
    or the SQLite rows, each skipped when it is not JSON); ``[]`` when the store holds nothing of it."""
    if location.startswith("postgres:"):
        sql = "SELECT entry FROM atomic_entries WHERE session_id = %s ORDER BY seq"
        texts = [text for (text,) in pg_rows(sql, location.rpartition("#")[2], elsewhere=elsewhere)]
        return [record for record in map(_json_or_none, texts) if record is not None]
    if not location.startswith("sqlite:"):
        path = Path(location)
        if not path.exists():
            return []
        records = []
        for line in path.read_text().split("\n"):
            with contextlib.suppress(ValueError):
                records.append(json.loads(line))
        return records[1:]
    db, _, session_id = location[len("sqlite:") :].rpartition("#")
    with contextlib.closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT entry FROM entries WHERE session_id = ? ORDER BY seq", (session_id,)).fetchall()
    # a row that is not JSON (put there by a test) is skipped, as a loader does
    return [record for record in (_json_or_none(entry) for (entry,) in rows) if record is not None]


def pg_rows(sql: str, *params: Any, elsewhere: bool = False) -> list[tuple[Any, ...]]:
    """Rows of one statement on the test's PostgreSQL schema (or the other one), committed."""
    import psycopg

    with psycopg.connect(DATABASE[1 if elsewhere else 0], autocommit=True) as conn:
        cursor = conn.execute(sql, params)
        return cursor.fetchall() if cursor.description else []


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def delete_by_hand(location: str) -> None:
    """Remove a session behind the host's back: its file, or its rows."""
    if location.startswith("postgres:"):
        session_id = location.rpartition("#")[2]
        pg_rows("DELETE FROM atomic_entries WHERE session_id = %s", session_id)
        pg_rows("DELETE FROM atomic_sessions WHERE id = %s", session_id)
        return
    if not location.startswith("sqlite:"):
        Path(location).unlink()
        return
    db, _, session_id = location[len("sqlite:") :].rpartition("#")
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("DELETE FROM entries WHERE session_id = ?", (session_id,))
        conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))


def user_texts(entries: list[dict[str, Any]]) -> list[str]:
    """The text of each user message entry, in order."""
    out = []
    for entry in entries:
        message = entry.get("message")
        if entry.get("type") == "message" and isinstance(message, dict) and message.get("role") == "user":
            content = message["content"]
            out.append(content if isinstance(content, str) else content[0]["text"])
    return out


def stored_header(location: str, *, elsewhere: bool = False) -> dict[str, Any]:
    """The session's header as the store holds it."""
    if location.startswith("postgres:"):
        sql = "SELECT header FROM atomic_sessions WHERE id = %s"
        (row,) = pg_rows(sql, location.rpartition("#")[2], elsewhere=elsewhere)
        return json.loads(row[0])
    if not location.startswith("sqlite:"):
        return json.loads(Path(location).read_text().split("\n", 1)[0])
    db, _, session_id = location[len("sqlite:") :].rpartition("#")
    with contextlib.closing(sqlite3.connect(db)) as conn:
        (text,) = conn.execute("SELECT header FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return json.loads(text)


def snapshot(
    location: str, directory: Path, extra: list[dict[str, Any]] = (), *, elsewhere: bool = False  # type: ignore[assignment]
) -> Path:
    """A JSONL copy of the session as the store holds it now (plus ``extra`` entries), in
    ``directory`` under the file's own name (``<id>.jsonl`` for SQLite): what a user would import."""
    directory.mkdir(parents=True, exist_ok=True)
    db = location.startswith(("sqlite:", "postgres:"))
    name = f"{location.rpartition('#')[2]}.jsonl" if db else Path(location).name
    records = [stored_header(location, elsewhere=elsewhere), *stored(location, elsewhere=elsewhere), *extra]
    path = directory / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records))
    return path


def more_turns(after: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """``count`` user/assistant entries continuing the entry ``after`` (as another machine would
    have written them)."""
    entries, parent = [], after["id"]
    for i in range(count):
        role = "user" if i % 2 == 0 else "assistant"
        message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": f"later {i}"}], "timestamp": 1}
        if role == "assistant":
            message |= {"api": "faux", "provider": "faux", "model": "faux-1", "stopReason": "stop"}
        entry = {"type": "message", "id": f"{i:08x}", "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z",
                 "message": message}  # fmt: skip
        entries.append(entry)
        parent = entry["id"]
    return entries
