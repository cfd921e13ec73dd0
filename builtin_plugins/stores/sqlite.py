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

from atomic_host.kit.collector import gc_paused
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
from atomic_host.kit.sessions.jsonl import loads_array
from atomic_host.kit.sessions.listing import ListingState, build_info, finish_listing
from atomic_host.kit.sessions.repair import report_unreadable
from atomic_host.kit.sessions.store import BaseStore, has_assistant
from atomic_host.kit.sessions.tree import Session, is_internal_header

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
    next_seq INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS sessions_cwd_modified ON sessions (cwd, modified_ms DESC);
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


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class SqliteWriter:
    """Persists one session: header + buffered entries in one transaction, then one per append."""

    def __init__(self, store: SqliteStore, state: ListingState | None = None, next_seq: int = 0) -> None:
        self.store = store
        self.state = state or ListingState()
        self.next_seq = next_seq
        self.session_id = ""
        self._header: dict[str, Any] = {}
        self.leased = False

    def _row(self, header: dict[str, Any]) -> dict[str, Any]:
        s = self.state
        return {
            "id": header["id"],
            "cwd": str(header.get("cwd", "")),
            "header": _dumps(header),
            "created": header.get("timestamp"),
            "modified_ms": s.modified_ms,
            "name": s.name,
            "has_name": int(s.has_name),
            "message_count": s.message_count,
            "first_message": s.first_message,
            "summary": _dumps(s.summary) if s.summary is not None else None,
            "internal": int(is_internal_header(header)),
            "next_seq": self.next_seq,
        }

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
            rows.append((header["id"], seq, _dumps(entry)))
            seq += 1
        old = (self.state, self.next_seq)
        self.state, self.next_seq = state, seq
        try:
            with self.store.transaction() as db:
                db.execute("DELETE FROM entries WHERE session_id = ?", (header["id"],))
                db.execute(
                    "INSERT OR REPLACE INTO sessions VALUES (:id, :cwd, :header, :created, :modified_ms,"
                    " :name, :has_name, :message_count, :first_message, :summary, :internal, :next_seq)",
                    self._row(header),
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
        row = self._row(self._header)
        row["next_seq"] = self.next_seq + 1
        try:
            with self.store.transaction() as db:
                updated = db.execute(
                    "UPDATE sessions SET modified_ms = :modified_ms, name = :name, has_name = :has_name,"
                    " message_count = :message_count, first_message = :first_message, summary = :summary,"
                    " next_seq = :next_seq WHERE id = :id",
                    row,
                ).rowcount
                if not updated:  # deleted while open here: its entries would be rows of no session
                    raise SessionFileGone(gone_message(self.store.location(self.session_id)))
                db.execute("INSERT INTO entries VALUES (?, ?, ?)", (row["id"], self.next_seq, _dumps(entry)))
        except BaseException:
            self.state = before
            raise
        self.next_seq += 1

    def close(self) -> None:
        if self.leased:
            self.leased = False
            self.store.leases.release(self.session_id)


def _loads_rows(texts: list[str]) -> list[Any]:
    """Decode entry rows in one array parse (see ``jsonl.parse_records``); per row on any doubt."""
    if texts:
        try:
            with gc_paused(then="promote"):  # acyclic objects, left old: see kit.collector
                items = loads_array(("[" + ",".join(texts) + "]").encode())
        except (ValueError, RecursionError, UnicodeEncodeError):
            items = None
        if isinstance(items, list) and len(items) == len(texts):
            return items
    return [_loads_row(text) for text in texts]


def _entry(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("id"), str)


def _loads_row(text: str) -> Any:
    """One row's value; None for a row that is not JSON (a hand edit), which loading skips."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


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
        count = self.counts.get(session_id, 0) - 1
        if count > 0:
            self.counts[session_id] = count
            return
        self.counts.pop(session_id, None)
        with contextlib.suppress(sqlite3.Error), self.store.transaction() as db:
            db.execute("DELETE FROM leases WHERE session_id = ? AND pid = ?", (session_id, os.getpid()))


def _alive(pid: int, host: str, this_host: str) -> bool:
    # another machine's process cannot be checked from here, so it counts as alive
    return host != this_host or pid_alive(pid)


class SqliteStore(BaseStore):
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
        self.leases = _Leases(self)
        self._listed: dict[str, tuple[Any, dict[str, Any]]] = {}
        """Session id → (its row, its info) as the last listing read them (see :meth:`_infos`)."""

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

    def _create(self, header: dict[str, Any], entries: list[dict[str, Any]]) -> Session:
        validate_session_id(header["id"])
        writer = SqliteWriter(self)
        session = Session(header, entries, writer=writer, location=self.location(header["id"]))
        if has_assistant(entries):
            session.flush()
        return session

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
        entries = _loads_rows(texts)
        if not all(map(_entry, entries)):
            # rows that are not entries (not JSON, not an object, no id): skipped, said once
            report_unreadable(self.location(session_id), [f"row {i}" for i, e in enumerate(entries) if not _entry(e)])
            entries = [e for e in entries if _entry(e)]
        header = json.loads(row[0])
        state = ListingState(
            message_count=row[4],
            first_message=row[5],
            modified_ms=row[1],
            name=row[2],
            has_name=bool(row[3]),
            summary=json.loads(row[6]) if row[6] else None,
        )
        writer = SqliteWriter(self, state, row[7])
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
        with self._lock:
            rows = self.db.execute(
                "SELECT id, header, modified_ms, name, has_name, message_count, first_message, summary"
                f" FROM sessions WHERE internal = 0 {where}",
                params,
            ).fetchall()
        # An info is a function of its row: a row equal to the last listing's is answered with
        # the info built then (10,000 sessions: parsing headers and formatting dates was most of
        # list_sessions). Rows are read every time, so another process's writes show at once.
        known, listed = self._listed, {}
        fresh = [r for r in rows if (k := known.get(r[0])) is None or k[0] != r]
        if fresh:
            with gc_paused():  # a dict per session (10,000 sessions: ~15% of a first listing)
                built = self._build_infos(fresh)
            known = {**known, **{r[0]: (r, info) for r, info in zip(fresh, built, strict=True)}}
        infos = []
        for r in rows:
            item = listed[r[0]] = known[r[0]]
            infos.append(dict(item[1]))  # copies: callers may change what they get
        self._listed = listed
        return finish_listing(infos)

    def _build_infos(self, rows: list[Any]) -> list[dict[str, Any]]:
        headers = _loads_rows([r[1] for r in rows])  # one array parse for every header
        prefix = f"sqlite:{self.db_path}#"  # self.location(id), without a call per row
        return [
            build_info(
                header,
                prefix + r[0],
                message_count=r[5],
                first_message=r[6],
                modified_ms=r[2],
                name=r[3],
                has_name=bool(r[4]),
                summary=json.loads(r[7]) if r[7] else None,
            )
            for r, header in zip(rows, headers, strict=True)
        ]

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

    def put(
        self, header: dict[str, Any], entries: list[dict[str, Any]], *, overwrite: bool = False
    ) -> Session:
        validate_session_id(header["id"])
        if self.has(header["id"]) and not overwrite:
            return self._load(header["id"])
        session = Session(header, entries, writer=SqliteWriter(self), location=self.location(header["id"]))
        session.flush()
        return session

    def close(self) -> None:
        with self._lock:
            self.db.close()
