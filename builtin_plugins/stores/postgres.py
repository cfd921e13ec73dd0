"""The PostgreSQL session store (``postgres``): every host, on any machine, on one database.

Chosen with ``--session-store postgres`` or settings ``"sessionStore": "postgres"``; the database is
``ATOMIC_DATABASE_URL``, else settings ``"database": {"url": ...}`` (docs/scale.md). Needs the
``postgres`` extra (psycopg 3); this module is imported only when the store is opened.

Same semantics as the SQLite store (tables.py): a ``atomic_sessions`` row per session holding the
header and the listing fields, an ``atomic_entries`` row per entry, lazy first write, ids looked
up in this project only, internal sessions never listed. What changes with many machines:

- **The write lock is a session-level advisory lock** (``pg_try_advisory_lock``) on this store's
  connection: it lives exactly as long as that connection, so it goes with the host however the
  host ends (SIGKILL, a dead machine once the server notices, see ``kit/database.py``). A second
  process opening the session reads it and is refused appends with the usual "open for writing in
  another atomic process" error, naming the holder (its ``application_name``: pid and machine).
- **An append is one statement** that bumps ``next_seq`` only if it is still the number this
  writer expects and inserts the entry under it (autocommit: one transaction, durable when the
  statement returns, ``synchronous_commit`` on). It runs on the connection that holds the lock;
  after a reconnect the lock is taken again first. A writer that lost its lock to another process
  and reconnected finds ``next_seq`` moved: the append fails, nothing is interleaved.
- **Blobs** (compaction backups, oversized tool results) live in ``atomic_blobs``, never on the
  local disk (see :meth:`PostgresWriter.put_blob`).

Calls are synchronous (psycopg's blocking API) under one lock; the host runs the slow ones (open,
list, delete, import) in threads. Appends (and a session's first write) run on the store's write
thread (:attr:`PostgresStore.write_thread`, one worker: in order), never on the event loop: the
session queues them and goes on (``kit/sessions/behind.py``), and what the host acknowledges waits
for them first. A round trip is well under a millisecond on a LAN; on a dead link it takes until
``tcp_user_timeout`` (~10 s), and only what waits for that write waits that long.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import Executor, ThreadPoolExecutor
from operator import itemgetter
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from atomic_host.kit import secrets
from atomic_host.kit.database import CLIENT_KEEPALIVES, SERVER_KEEPALIVES, advisory_key, masked_url
from atomic_host.kit.log import log
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
from atomic_host.kit.sessions.tree import Session, is_internal_header
from builtin_plugins.stores.tables import (
    REFRESH_COLUMNS,
    ListingCache,
    TableStore,
    TableWriter,
    dumps,
    last_release,
    listing_info,
    loads_entries,
    refreshed,
    state_of,
)

LOCK_NAMESPACE = "atomic-session"
"""The advisory-lock namespace of session write locks (:func:`~atomic_host.kit.database.advisory_key`)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS atomic_sessions (
    id text PRIMARY KEY,
    cwd text NOT NULL,
    header text NOT NULL,
    created text,
    modified_ms double precision,
    name text,
    has_name boolean NOT NULL DEFAULT false,
    message_count integer NOT NULL DEFAULT 0,
    first_message text,
    summary text,
    internal boolean NOT NULL DEFAULT false,
    next_seq bigint NOT NULL DEFAULT 0
);
-- no index holds what an append changes (sort_ms: the listing sorts), so its update stays HOT
ALTER TABLE atomic_sessions ADD COLUMN IF NOT EXISTS info text, ADD COLUMN IF NOT EXISTS sort_ms double precision;
CREATE INDEX IF NOT EXISTS atomic_sessions_cwd ON atomic_sessions (cwd) WHERE NOT internal;
CREATE TABLE IF NOT EXISTS atomic_entries (
    session_id text NOT NULL,
    seq bigint NOT NULL,
    entry text NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS atomic_blobs (
    session_id text NOT NULL,
    name text NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (session_id, name)
);
"""

_UPSERT = """
INSERT INTO atomic_sessions (id, cwd, header, created, modified_ms, name, has_name, message_count,
    first_message, summary, internal, next_seq, info, sort_ms)
VALUES (%(id)s, %(cwd)s, %(header)s, %(created)s, %(modified_ms)s, %(name)s, %(has_name)s,
    %(message_count)s, %(first_message)s, %(summary)s, %(internal)s, %(next_seq)s, %(info)s, %(sort_ms)s)
ON CONFLICT (id) DO UPDATE SET cwd = EXCLUDED.cwd, header = EXCLUDED.header, created = EXCLUDED.created,
    modified_ms = EXCLUDED.modified_ms, name = EXCLUDED.name, has_name = EXCLUDED.has_name,
    message_count = EXCLUDED.message_count, first_message = EXCLUDED.first_message,
    summary = EXCLUDED.summary, internal = EXCLUDED.internal, next_seq = EXCLUDED.next_seq,
    info = EXCLUDED.info, sort_ms = EXCLUDED.sort_ms
"""

_APPEND = """
WITH bumped AS (
    UPDATE atomic_sessions SET modified_ms = %(modified_ms)s, name = %(name)s, has_name = %(has_name)s,
        message_count = %(message_count)s, first_message = %(first_message)s, summary = %(summary)s,
        info = %(info)s, sort_ms = %(sort_ms)s, next_seq = next_seq + 1
    WHERE id = %(id)s AND next_seq = %(seq)s
    RETURNING id
)
INSERT INTO atomic_entries (session_id, seq, entry) SELECT id, %(seq)s, %(entry)s FROM bumped
"""
"""One fenced append: the entry goes in only under the sequence number this writer expects."""

_HOLDER = """
SELECT a.application_name, host(a.client_addr) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.classid = %s::oid AND l.objid = %s::oid
"""


class DatabaseError(OSError):
    """The session database failed or could not be reached (an OSError: the host reports a session
    it could not save, as for a full disk)."""


def _text(value: Any) -> str | None:
    """A value for a text column: PostgreSQL text holds neither NUL nor lone surrogates."""
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def _listing_params(header: dict[str, Any], state: ListingState) -> dict[str, Any]:
    info, sort_ms = listing_info(header, state)
    return {
        "info": info,
        "sort_ms": sort_ms,
        "modified_ms": state.modified_ms,
        "name": _text(state.name),
        "has_name": state.has_name,
        "message_count": state.message_count,
        "first_message": _text(state.first_message),
        "summary": dumps(state.summary) if state.summary is not None else None,
    }


def _session_row(header: dict[str, Any], state: ListingState, next_seq: int) -> dict[str, Any]:
    return {
        "id": header["id"],
        "cwd": _text(header.get("cwd", "")),
        "header": dumps(header),
        "created": _text(header.get("timestamp")),
        "internal": is_internal_header(header),
        "next_seq": next_seq,
        **_listing_params(header, state),
    }


def _conninfo(url: str) -> str:
    """``url`` with :data:`CLIENT_KEEPALIVES` and an ``application_name`` (pid and machine: who
    holds a lock) added where it does not set them."""
    given = conninfo_to_dict(url)
    extra: dict[str, Any] = {k: v for k, v in CLIENT_KEEPALIVES.items() if k not in given}
    if "application_name" not in given:
        extra["application_name"] = f"atomic pid {os.getpid()} on {socket.gethostname()}"[:63]
    return make_conninfo(url, **extra)


_LISTING = "SELECT id, info, COALESCE(sort_ms, 0) FROM atomic_sessions WHERE NOT internal {where}"
"""The listing's rows (tables.LISTING's columns and the sort key), unsorted: sorted by the server,
the records travel through the sort with their keys (~470 bytes a session; 10,000 spill past the
default ``work_mem`` to a sort on disk: 85 ms of the server's time against 8 ms for the scan),
where the host sorts 10,000 keys in about 3 ms (:func:`_in_order`)."""


def _in_order(rows: list[Any]) -> list[Any]:
    """``rows`` of :data:`_LISTING` in the listing's order (tables.LISTING's: newest first, then id)."""
    rows.sort(key=itemgetter(2, 0), reverse=True)
    return rows


class PostgresWriter(TableWriter):
    """Persists one session: header + entries in one transaction, then one fenced statement per append."""

    store: PostgresStore

    @property
    def write_thread(self) -> Executor:
        """Where the session runs this writer's calls (kit/sessions/tree.py): the store's write thread."""
        return self.store.write_thread

    def lock(self) -> None:
        """Hold the session's advisory lock on the store's current connection (raises
        :class:`SessionLocked` if another process holds it)."""
        if self.leased:
            self.store.leases.ensure(self.session_id)
        else:
            self.store.leases.acquire(self.session_id)
            self.leased = True

    def write_all(self, header: dict[str, Any], entries: list[dict[str, Any]]) -> None:
        self.session_id = session_id = header["id"]
        state = ListingState()
        rows = []
        for seq, entry in enumerate(entries):
            state.apply(entry)
            rows.append((session_id, seq, dumps(entry)))
        with self.store.writing(self) as db, db.transaction(), db.cursor() as cur:
            cur.execute("DELETE FROM atomic_entries WHERE session_id = %s", (session_id,))
            cur.execute(_UPSERT, _session_row(header, state, len(rows)))
            if rows:
                with cur.copy("COPY atomic_entries (session_id, seq, entry) FROM STDIN") as copy:
                    for item in rows:
                        copy.write_row(item)
        self.state, self.next_seq, self._header = state, len(rows), header

    def append(self, entry: dict[str, Any]) -> None:
        before = ListingState(**vars(self.state))
        self.state.apply(entry)
        params = {"id": self.session_id, "seq": self.next_seq, "entry": dumps(entry)}
        params.update(_listing_params(self._header, self.state))
        try:
            with self.store.writing(self) as db:
                if db.execute(_APPEND, params).rowcount != 1:
                    self._fence_failed(db)
        except BaseException:
            self.state = before
            raise
        self.next_seq += 1

    def _fence_failed(self, db: psycopg.Connection[Any]) -> None:
        row = db.execute("SELECT next_seq FROM atomic_sessions WHERE id = %s", (self.session_id,)).fetchone()
        where = self.store.location(self.session_id)
        if row is None:  # deleted meanwhile: every write fails, nothing is written again (issue 24)
            raise SessionFileGone(gone_message(where))
        raise SessionLocked(
            f"Session was continued in another atomic process since it was opened here: {where} "
            f"({row[0]} entries stored, {self.next_seq} known here). Open it again to continue it."
        )

    def put_blob(self, name: str, data: bytes) -> str:
        """Keep ``data`` with the session under ``name`` (replacing one of that name); returns its
        location, ``<session location>/<name>``."""
        return self.store.put_blob(self.session_id, name, data)


class _Locks:
    """This process's session write locks. PostgreSQL counts a session-level advisory lock taken
    twice on one connection, so the lock is taken once per connection and counted here for the
    writers of this process that share it (switching to the session open here)."""

    def __init__(self, store: PostgresStore) -> None:
        self.store = store
        self.counts: dict[str, int] = {}
        self.held: dict[str, int] = {}
        """Session id → the connection generation its advisory lock was taken on."""

    def acquire(self, session_id: str) -> None:
        self.ensure(session_id)
        self.counts[session_id] = self.counts.get(session_id, 0) + 1

    def ensure(self, session_id: str) -> None:
        """Hold the lock on the current connection: taken again after a reconnect, if still free."""
        with self.store.db() as db:
            if self.held.get(session_id) == self.store.generation:
                return
            key = advisory_key(LOCK_NAMESPACE, session_id)
            (got,) = db.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()  # type: ignore[misc]
            if not got:
                raise SessionLocked(locked_message(self.store.location(session_id), self.holder(db, key)))
            self.held[session_id] = self.store.generation

    @staticmethod
    def holder(db: psycopg.Connection[Any], key: int) -> str:
        """`` (<application> at <address>)`` of the connection holding the advisory lock ``key``."""
        unsigned = key & 0xFFFFFFFFFFFFFFFF
        row = db.execute(_HOLDER, (unsigned >> 32, unsigned & 0xFFFFFFFF)).fetchone()
        if row is None:
            return ""
        name, address = row
        return f" ({name or 'a client'}{f' at {address}' if address else ''})"

    def release(self, session_id: str) -> None:
        if not last_release(self.counts, session_id):
            return
        generation = self.held.pop(session_id, None)
        if generation is not None and generation == self.store.generation:
            with contextlib.suppress(OSError):
                self.store.unlock(advisory_key(LOCK_NAMESPACE, session_id))


class PostgresStore(TableStore):
    """Sessions, entries and blobs in a PostgreSQL database shared by every host."""

    kind = "postgres"

    def __init__(self, url: str, *, fsync: str = "always", cwd: str | None = None) -> None:
        self.cwd = cwd
        """This project's cwd: ids are looked up and deleted among its sessions only (None: all)."""
        self.url = masked_url(url)
        """The URL as shown (password masked); the password is also registered as a secret."""
        self._conninfo = _conninfo(url)
        self._register_password()
        self._synchronous = fsync != "never"
        self._lock = threading.RLock()
        self._depth = 0
        self._conn: psycopg.Connection[Any] | None = None
        self.generation = 0
        """Incremented on every (re)connect: an advisory lock is held on one generation only."""
        self.display = ""
        self.leases = _Locks(self)
        self._write_thread: ThreadPoolExecutor | None = None
        self._listing = ListingCache()
        with self.db() as db, db.transaction():
            # concurrent first starts must not race on CREATE TABLE (a unique violation in pg_type)
            db.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_key(LOCK_NAMESPACE, "schema"),))
            db.execute(_SCHEMA)
            self._refresh("info IS NULL", ())

    def _register_password(self) -> None:
        password = conninfo_to_dict(self._conninfo).get("password")
        if isinstance(password, str) and password:
            secrets.register(password, "ATOMIC_DATABASE_URL")

    # -- the connection -------------------------------------------------------------------------
    @property
    def write_thread(self) -> Executor:
        """The thread the sessions' writes run on, one after another (made on first use)."""
        if self._write_thread is None:
            self._write_thread = ThreadPoolExecutor(1, thread_name_prefix="atomic-session-writes")
        return self._write_thread

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            conn = psycopg.connect(self._conninfo, autocommit=True)
        except psycopg.Error as exc:
            raise DatabaseError(f"Could not connect to the session database {self.url}: {exc}") from None
        try:
            # the server drops a dead machine's backend (and its locks) in ~10 s: kit/database.py
            names = list(SERVER_KEEPALIVES)
            sql = "SELECT " + ", ".join("set_config(%s, %s, false)" for _ in names)
            conn.execute(sql, [v for n in names for v in (n, str(SERVER_KEEPALIVES[n]))])  # type: ignore[arg-type]
            if not self._synchronous:
                conn.execute("SET synchronous_commit = off")
        except psycopg.Error as exc:
            log.warning(f"session database {self.url}: could not set the keepalive settings: {exc}")
        info = conn.info
        self.display = f"//{info.user}@{info.host}:{info.port}/{info.dbname}"
        self.generation += 1
        return conn

    @contextlib.contextmanager
    def db(self) -> Iterator[psycopg.Connection[Any]]:
        """The connection, (re)connected if needed, held by this thread until the block ends; a
        psycopg error in it becomes a :class:`DatabaseError` (and a broken connection is dropped)."""
        with self._lock:
            if self._depth:  # nested: the outer block owns reconnecting and errors
                self._depth += 1
                try:
                    yield self._conn  # type: ignore[misc]
                finally:
                    self._depth -= 1
                return
            conn = self._conn
            if conn is None or conn.closed or conn.broken:
                if conn is not None:
                    with contextlib.suppress(Exception):
                        conn.close()
                self._conn = None
                conn = self._conn = self._connect()
            self._depth = 1
            try:
                yield conn
            except psycopg.Error as exc:
                if conn.broken or conn.closed:
                    log.warning(f"lost the connection to the session database {self.url}: {exc}")
                raise DatabaseError(f"Session database {self.url}: {exc}") from None
            finally:
                self._depth = 0

    @contextlib.contextmanager
    def writing(self, writer: PostgresWriter) -> Iterator[psycopg.Connection[Any]]:
        """The connection, holding ``writer``'s session lock on it for the whole block."""
        with self.db() as db:
            writer.lock()
            yield db

    def unlock(self, key: int) -> None:
        with self.db() as db:
            db.execute("SELECT pg_advisory_unlock(%s)", (key,))

    # -- sessions -------------------------------------------------------------------------------
    def location(self, session_id: str) -> str:
        return f"postgres:{self.display}#{session_id}"

    def _writer(self) -> PostgresWriter:
        return PostgresWriter(self)

    def _load(self, session_id: str, cwd: str | None = None) -> Session:
        writer = PostgresWriter(self)
        writer.session_id = session_id
        locked: SessionLocked | None = None
        try:
            writer.lock()  # first, so nobody appends between reading and holding
        except SessionLocked as exc:  # readable here; appends fail with this message until it frees
            locked = exc
        try:
            with self.db() as db:
                row = db.execute(
                    "SELECT header, modified_ms, name, has_name, message_count, first_message, summary, next_seq, cwd"
                    " FROM atomic_sessions WHERE id = %s",
                    (session_id,),
                ).fetchone()
                if row is None or (cwd is not None and row[8] != _text(cwd)):
                    raise SessionNotFound(f"Session not found: {session_id}")
                # below next_seq: every such entry was committed with the row just read
                cur = db.execute(
                    "SELECT entry FROM atomic_entries WHERE session_id = %s AND seq < %s ORDER BY seq",
                    (session_id, row[7]),
                )
                texts = [text for (text,) in cur]
        except BaseException:
            writer.close()
            raise
        if locked is not None:
            log.warning(f"{locked}")
        writer.state, writer.next_seq, writer._header = state_of(*row[1:7]), row[7], json.loads(row[0])
        entries = loads_entries(texts, self.location(session_id))
        return Session(writer._header, entries, writer=writer, location=self.location(session_id), persisted=True)

    def open(self, session_id: str, directory: str | Path | None = None) -> Session:
        """Open by id among this project's sessions; ``directory`` (a database location) must be
        this store's database."""
        validate_session_id(session_id)
        if directory is not None:
            if str(directory) not in (self.display, f"postgres:{self.display}"):
                raise SessionNotFound(f"Session not found: {session_id} (not in {self.url})")
            return self._load(session_id)
        return self._load(session_id, self.cwd)

    def open_path(self, path: str | Path) -> Session:
        """Open a ``postgres://user@host:port/db#<id>`` location (or a bare id)."""
        text = str(path)
        if text.startswith("postgres:") and "#" in text:
            where, _, session_id = text.rpartition("#")
            return self.open(session_id, where)
        if text.endswith(".jsonl"):
            raise InvalidSessionFile(f"Not in this PostgreSQL store: {text} (use import_file)")
        return self.open(text)

    def has(self, session_id: str, cwd: str | None = None) -> bool:
        with self.db() as db:
            row = db.execute("SELECT cwd FROM atomic_sessions WHERE id = %s", (session_id,)).fetchone()
        return row is not None and (cwd is None or row[0] == _text(cwd))

    def _infos(self, where: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
        query = _LISTING.format(where=where)
        with self.db() as db:
            prefix = f"postgres:{self.display}#"
            infos, bad = self._listing.infos(_in_order(db.execute(query, params).fetchall()), prefix)
            if bad:  # rows written before the listing columns, or edited by hand: made again
                self._refresh("id = ANY(%s)", (bad,))
                infos = self._listing.infos(_in_order(db.execute(query, params).fetchall()), prefix)[0]
        return infos

    def _refresh(self, where: str, params: tuple[Any, ...]) -> None:
        """Make the listing columns of the rows ``where`` selects again, from their header and state."""
        with self.db() as db:
            rows = db.execute(f"SELECT {REFRESH_COLUMNS} FROM atomic_sessions WHERE {where}", params).fetchall()
            updates = refreshed(rows)
            if updates:
                with db.cursor() as cur:
                    cur.executemany(
                        "UPDATE atomic_sessions SET info = %(info)s, sort_ms = %(sort_ms)s"
                        " WHERE id = %(id)s AND next_seq = %(next_seq)s",
                        updates,
                    )

    def list(self, cwd: str) -> list[dict[str, Any]]:
        return self._infos("AND cwd = %s", (_text(cwd),))

    def list_all(self) -> list[dict[str, Any]]:
        return self._infos("", ())

    def delete(self, session_id: str) -> None:
        """Delete a session of this project (another project's id is a no-op). A delete is a
        write: it takes the session's advisory lock, so a session another process holds is
        refused (:class:`SessionLocked`)."""
        validate_session_id(session_id)
        try:
            self.leases.acquire(session_id)
        except SessionLocked:
            with self.db() as db:
                holder = _Locks.holder(db, advisory_key(LOCK_NAMESPACE, session_id))
            raise SessionLocked(delete_locked_message(session_id, self.location(session_id), holder)) from None
        try:
            with self.db() as db, db.transaction():
                if self.cwd is not None and not db.execute(
                    "SELECT 1 FROM atomic_sessions WHERE id = %s AND cwd = %s", (session_id, _text(self.cwd))
                ).fetchone():
                    return
                for table, column in (("atomic_entries", "session_id"), ("atomic_blobs", "session_id")):
                    db.execute(f"DELETE FROM {table} WHERE {column} = %s", (session_id,))
                db.execute("DELETE FROM atomic_sessions WHERE id = %s", (session_id,))
        finally:
            self.leases.release(session_id)

    # -- blobs ----------------------------------------------------------------------------------
    def put_blob(self, session_id: str, name: str, data: bytes) -> str:
        """Keep ``data`` under (``session_id``, ``name``); returns ``<session location>/<name>``."""
        with self.db() as db:
            db.execute(
                "INSERT INTO atomic_blobs (session_id, name, data) VALUES (%s, %s, %s)"
                " ON CONFLICT (session_id, name) DO UPDATE SET data = EXCLUDED.data",
                (session_id, name, data),
            )
        return f"{self.location(session_id)}/{name}"

    def get_blob(self, location: str) -> bytes:
        """The data :meth:`put_blob` returned ``location`` for (:class:`SessionNotFound` if none)."""
        prefix = f"postgres:{self.display}#"
        session_id, _, name = location[len(prefix) :].partition("/") if location.startswith(prefix) else ("", "", "")
        with self.db() as db:
            row = db.execute(
                "SELECT data FROM atomic_blobs WHERE session_id = %s AND name = %s", (session_id, name)
            ).fetchone()
        if row is None:
            raise SessionNotFound(f"Not in this session store: {location}")
        return bytes(row[0])

    def close(self) -> None:
        if self._write_thread is not None:
            self._write_thread.shutdown(wait=True)  # the writes handed over first
            self._write_thread = None
        with self._lock:
            self.leases.counts.clear()
            self.leases.held.clear()
            if self._conn is not None:
                self._conn.close()  # the server frees every advisory lock of this connection
                self._conn = None


__all__ = ["LOCK_NAMESPACE", "DatabaseError", "PostgresStore", "PostgresWriter"]
