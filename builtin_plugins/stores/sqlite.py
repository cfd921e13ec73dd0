"""The SQLite session store (``sqlite``): every session in one database, ``<agentDir>/sessions.db`` (§2.1 [inferred]).

WAL journal. ``synchronous=FULL`` when ``sessionFsync`` is ``always`` (the default): each append
commits with a WAL fsync, so an acknowledged entry survives power loss, matching the JSONL
guarantee; ``NORMAL`` with ``never`` (WAL + NORMAL still survives a process crash). Listing fields
are maintained on every append in the ``sessions`` row, so ``list`` never reads entries.
Same semantics as JSONL: lazy first write, leaf = last appended entry on load.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
import threading
from pathlib import Path
from typing import Any

from atomic_host.kit.fsio import ensure_private_dir
from atomic_host.kit.log import log
from atomic_host.kit.processes import pid_alive
from atomic_host.kit.sessions.errors import (
    InvalidSessionFile,
    SessionFileGone,
    SessionLocked,
    SessionNotFound,
    delete_locked_message,
    gone_message,
    locked_message,
)
from atomic_host.kit.sessions.ids import validate_session_id
from atomic_host.kit.sessions.listing import ListingState
from atomic_host.kit.sessions.tree import Session
from builtin_plugins.stores.tables import (
    LISTING,
    REFRESH_COLUMNS,
    ListingCache,
    TableStore,
    TableWriter,
    dumps,
    last_release,
    listing_row,
    loads_entries,
    refreshed,
    state_of,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    cwd TEXT NOT NULL,
    header TEXT NOT NULL,
    created TEXT,
    modified_ms REAL,
    name TEXT,
    has_name INTEGER NOT NULL DEFAULT 0,
    message_count INTEGER NOT NULL DEFAULT 0,
    first_message TEXT,
    summary TEXT,
    internal INTEGER NOT NULL DEFAULT 0,
    next_seq INTEGER NOT NULL DEFAULT 0,
    info TEXT,
    sort_ms REAL
);
CREATE TABLE IF NOT EXISTS entries (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    entry TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS leases (
    session_id TEXT PRIMARY KEY,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL
) WITHOUT ROWID;
"""

_INDEXES = """
DROP INDEX IF EXISTS sessions_cwd_modified;
CREATE INDEX IF NOT EXISTS sessions_listing ON sessions (cwd, sort_ms DESC, id DESC) WHERE internal = 0;
"""
"""The listing's order (tables.LISTING); made after :func:`_add_listing_columns` (a database
written before the listing columns gets them first)."""

_COLUMNS = "id, cwd, header, created, modified_ms, name, has_name, message_count, first_message, summary, internal, "
_COLUMNS += "next_seq, info, sort_ms"


class SqliteWriter(TableWriter):
    """Persists one session: header + buffered entries in one transaction, then one per append."""

    store: SqliteStore

    def lock(self) -> None:
        """Hold the session's write lease (raises :class:`SessionLocked` if a live process has it)."""
        if not self.leased:
            self.store.leases.acquire(self.session_id)
            self.leased = True

    def write_all(self, header: dict[str, Any], entries: list[dict[str, Any]]) -> None:
        self.session_id = header["id"]
        self.lock()
        state, seq = ListingState(), 0
        rows = []
        for entry in entries:
            state.apply(entry)
            rows.append((header["id"], seq, dumps(entry)))
            seq += 1
        old = (self.state, self.next_seq)
        self.state, self.next_seq = state, seq
        try:
            with self.store.transaction() as db:
                db.execute("DELETE FROM entries WHERE session_id = ?", (header["id"],))
                db.execute(
                    f"INSERT OR REPLACE INTO sessions ({_COLUMNS}) VALUES (:{_COLUMNS.replace(', ', ', :')})",
                    listing_row(header, self.state, self.next_seq),
                )
                db.executemany("INSERT INTO entries VALUES (?, ?, ?)", rows)
        except BaseException:
            self.state, self.next_seq = old
            raise
        self._header = header

    def append(self, entry: dict[str, Any]) -> None:
        self.lock()
        before = ListingState(**vars(self.state))
        self.state.apply(entry)
        row = listing_row(self._header, self.state, self.next_seq + 1)
        try:
            with self.store.transaction() as db:
                updated = db.execute(
                    "UPDATE sessions SET modified_ms = :modified_ms, name = :name, has_name = :has_name,"
                    " message_count = :message_count, first_message = :first_message, summary = :summary,"
                    " next_seq = :next_seq, info = :info, sort_ms = :sort_ms WHERE id = :id",
                    row,
                ).rowcount
                if not updated:  # deleted while open here: its entries would be rows of no session
                    raise SessionFileGone(gone_message(self.store.location(self.session_id)))
                db.execute("INSERT INTO entries VALUES (?, ?, ?)", (row["id"], self.next_seq, dumps(entry)))
        except BaseException:
            self.state = before
            raise
        self.next_seq += 1


class _Leases:
    """Write leases on sessions, the SQLite counterpart of the JSONL files' ``flock``: a row per
    session naming the process that writes it. A lease whose process is gone (same machine, pid not
    alive) is taken over, so a killed host never locks its session out. One process may hold a
    lease for several writers (switching to the open session), counted."""

    def __init__(self, store: SqliteStore) -> None:
        self.store = store
        self.counts: dict[str, int] = {}
        self.host = socket.gethostname()

    def acquire(self, session_id: str) -> None:
        if session_id in self.counts:
            self.counts[session_id] += 1
            return
        with self.store.transaction() as db:
            holder = self.other_holder(db, session_id)
            if holder:
                raise SessionLocked(locked_message(self.store.location(session_id), holder))
            db.execute("INSERT OR REPLACE INTO leases VALUES (?, ?, ?)", (session_id, os.getpid(), self.host))
        self.counts[session_id] = 1

    def other_holder(self, db: sqlite3.Connection, session_id: str) -> str:
        """`` (pid N on HOST)`` when another live process holds the session's lease, else ``""``
        (read inside the caller's transaction)."""
        row = db.execute("SELECT pid, host FROM leases WHERE session_id = ?", (session_id,)).fetchone()
        if row is not None and (row[0], row[1]) != (os.getpid(), self.host) and _alive(row[0], row[1], self.host):
            return f" (pid {row[0]} on {row[1]})"
        return ""

    def release(self, session_id: str) -> None:
        if not last_release(self.counts, session_id):
            return
        with contextlib.suppress(sqlite3.Error), self.store.transaction() as db:
            db.execute("DELETE FROM leases WHERE session_id = ? AND pid = ?", (session_id, os.getpid()))


def _add_listing_columns(db: sqlite3.Connection) -> None:
    """``info`` and ``sort_ms`` in a database written before them (filled in by ``_refresh``)."""
    have = {row[1] for row in db.execute("PRAGMA table_info(sessions)")}
    for column, kind in (("info", "TEXT"), ("sort_ms", "REAL")):
        if column not in have:
            db.execute(f"ALTER TABLE sessions ADD COLUMN {column} {kind}")


def _alive(pid: int, host: str, this_host: str) -> bool:
    # another machine's process cannot be checked from here, so it counts as alive
    return host != this_host or pid_alive(pid)


class SqliteStore(TableStore):
    """Sessions and entries in one SQLite database (WAL)."""

    kind = "sqlite"

    def __init__(self, db_path: Path, *, fsync: str = "always", cwd: str | None = None) -> None:
        self.db_path = Path(db_path)
        self.cwd = cwd
        """This project's cwd: ids are looked up and deleted among its sessions only (None: all)."""
        ensure_private_dir(self.db_path.parent)
        # Create the file owner-only first: SQLite gives -wal/-shm the database file's mode.
        os.close(os.open(self.db_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600))
        self._lock = threading.RLock()
        self.db = sqlite3.connect(self.db_path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute(f"PRAGMA synchronous={'FULL' if fsync != 'never' else 'NORMAL'}")
        self.db.execute("PRAGMA busy_timeout=5000")
        self.db.executescript(_SCHEMA)
        _add_listing_columns(self.db)
        self.db.executescript(_INDEXES)
        self.leases = _Leases(self)
        self._listing = ListingCache()
        with self._lock:
            self._refresh("info IS NULL", ())

    @contextlib.contextmanager
    def transaction(self) -> Any:
        with self._lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def location(self, session_id: str) -> str:
        return f"sqlite:{self.db_path}#{session_id}"

    def _writer(self) -> SqliteWriter:
        return SqliteWriter(self)

    def _load(self, session_id: str, cwd: str | None = None) -> Session:
        with self._lock:
            row = self.db.execute(
                "SELECT header, modified_ms, name, has_name, message_count, first_message, summary, next_seq, cwd"
                " FROM sessions WHERE id = ?",
                (session_id,),
            ).fetchone()
            if row is None or (cwd is not None and row[8] != cwd):
                raise SessionNotFound(f"Session not found: {session_id}")
            texts = [
                text
                for (text,) in self.db.execute(
                    "SELECT entry FROM entries WHERE session_id = ? ORDER BY seq", (session_id,)
                )
            ]
        entries = loads_entries(texts, self.location(session_id))
        header = json.loads(row[0])
        writer = SqliteWriter(self, state_of(*row[1:7]), row[7])
        writer.session_id, writer._header = session_id, header
        try:
            writer.lock()  # held while the session is open here, so no other process appends
        except SessionLocked as exc:  # readable here; appends fail with this message until it frees
            log.warning(f"{exc}")
        return Session(header, entries, writer=writer, location=self.location(session_id), persisted=True)

    def open(self, session_id: str, directory: str | Path | None = None) -> Session:
        """Open by id; with ``directory`` (a db file or a dir holding sessions.db) look only there."""
        validate_session_id(session_id)
        if directory is not None:
            target = Path(directory)
            target = target if target.suffix == ".db" else target / "sessions.db"
            if target.resolve() != self.db_path.resolve():
                if not target.is_file():
                    raise SessionNotFound(f"Session not found: {session_id}")
                return SqliteStore(target)._load(session_id)  # its writer keeps that connection
            return self._load(session_id)
        return self._load(session_id, self.cwd)  # this project's sessions only

    def open_path(self, path: str | Path) -> Session:
        """Open a ``sqlite:<db>#<id>`` location (or a bare id)."""
        text = str(path)
        if text.startswith("sqlite:") and "#" in text:
            db, _, session_id = text[len("sqlite:") :].rpartition("#")
            return self.open(session_id, db)
        if text.endswith(".jsonl"):
            raise InvalidSessionFile(f"Not in this SQLite store: {text} (use import_file)")
        return self.open(text)

    def has(self, session_id: str, cwd: str | None = None) -> bool:
        with self._lock:
            row = self.db.execute("SELECT cwd FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return row is not None and (cwd is None or row[0] == cwd)

    def _infos(self, where: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
        query = LISTING.format(table="sessions", internal="internal = 0", where=where)
        prefix = f"sqlite:{self.db_path}#"
        with self._lock:
            infos, bad = self._listing.infos(self.db.execute(query, params).fetchall(), prefix)
            if bad:  # rows written before the listing columns, or edited by hand: made again
                self._refresh(f"id IN ({', '.join('?' * len(bad))})", tuple(bad))
                infos = self._listing.infos(self.db.execute(query, params).fetchall(), prefix)[0]
        return infos

    def _refresh(self, where: str, params: tuple[Any, ...]) -> None:
        """Make the listing columns of the rows ``where`` selects again, from their header and state."""
        rows = self.db.execute(f"SELECT {REFRESH_COLUMNS} FROM sessions WHERE {where}", params).fetchall()
        if rows:
            with self.transaction() as db:
                db.executemany(
                    "UPDATE sessions SET info = :info, sort_ms = :sort_ms WHERE id = :id AND next_seq = :next_seq",
                    refreshed(rows),
                )

    def list(self, cwd: str) -> list[dict[str, Any]]:
        return self._infos("AND cwd = ?", (cwd,))

    def list_all(self) -> list[dict[str, Any]]:
        return self._infos("", ())

    def delete(self, session_id: str) -> None:
        """Delete a session of this project (another project's id is a no-op). A delete is a
        write: a session whose lease another live process holds is refused (:class:`SessionLocked`)."""
        validate_session_id(session_id)
        with self.transaction() as db:
            if self.cwd is not None and not db.execute(
                "SELECT 1 FROM sessions WHERE id = ? AND cwd = ?", (session_id, self.cwd)
            ).fetchone():
                return
            holder = self.leases.other_holder(db, session_id)
            if holder:
                raise SessionLocked(delete_locked_message(session_id, self.location(session_id), holder))
            db.execute("DELETE FROM entries WHERE session_id = ?", (session_id,))
            db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            db.execute("DELETE FROM leases WHERE session_id = ? AND pid != ?", (session_id, os.getpid()))

    def close(self) -> None:
        with self._lock:
            self.db.close()
