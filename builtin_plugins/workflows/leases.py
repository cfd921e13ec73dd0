"""Executor liveness from the database, not from pids or hostnames.

Each process that launches DBOS holds a lease named by its executor id for as long as it lives:

- PostgreSQL: a session advisory lock on a connection of its own (``pg_advisory_lock(CLASS,
  key)``). The server drops it when the process dies, or when the connection is found dead (the
  connection sets the server's TCP keepalives and ``tcp_user_timeout``, as the session store's
  do: about 10 s after a link is cut).
  Any process reads who holds one from ``pg_locks``.
- SQLite (one machine): an ``flock`` on ``workflows.leases/<executor>.lock`` next to the
  database file; the kernel drops it when the process dies.

A second lock of the same kind (:meth:`Leases.try_sweep`) lets one process at a time recover the
runs of dead executors. Every call blocks: run them in a thread.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import threading
from pathlib import Path
from typing import Any, Protocol

from atomic_host.kit.database import CLIENT_KEEPALIVES, SERVER_KEEPALIVES

CLASS = 0x61746F6D
"""The first key of every advisory lock of this plugin (``atom``); the second is the executor's."""
SWEEP = 0
SERVER_OPTIONS = " ".join(f"-c {name}={value}" for name, value in SERVER_KEEPALIVES.items())
"""The server ends the backend of a machine that died or lost its link in ~10 s (kit/database.py):
that frees its lease."""


class Leases(Protocol):
    def hold(self, executor_id: str) -> None:
        """Take this process's lease (before it dequeues anything)."""

    def alive(self, executor_ids: set[str]) -> set[str]:
        """Those of ``executor_ids`` whose lease is held by a live process."""

    def try_sweep(self) -> bool:
        """Take the recovery lock if no other process has it (then :meth:`end_sweep`)."""

    def end_sweep(self) -> None: ...

    def close(self) -> None: ...


def lease_key(executor_id: str) -> int:
    """A positive 31-bit key (advisory locks show as unsigned oids in ``pg_locks``)."""
    return int.from_bytes(hashlib.sha256(executor_id.encode()).digest()[:4], "big") & 0x7FFFFFFF or 1


class PostgresLeases:
    def __init__(self, url: str) -> None:
        self.url = url
        self._conn: Any = None
        self._key: int | None = None
        self._mutex = threading.Lock()

    def _connect(self) -> Any:
        # lazy: psycopg (~90 ms) only with a PostgreSQL database for workflows
        import psycopg

        scheme, sep, rest = self.url.partition("://")
        url = scheme.split("+", 1)[0] + sep + rest  # postgresql+psycopg:// is SQLAlchemy's spelling
        settings: dict[str, Any] = {
            **CLIENT_KEEPALIVES,
            "autocommit": True,
            "options": SERVER_OPTIONS,
            "application_name": "atomic-lease",
        }
        try:
            conn = psycopg.connect(url, **settings)
        except psycopg.OperationalError as exc:
            if "does not exist" not in str(exc):
                raise
            _create_database(url, settings)  # the first process on a new database: as DBOS would
            conn = psycopg.connect(url, **settings)
        if self._key is not None:
            conn.execute("SELECT pg_advisory_lock(%s, %s)", (CLASS, self._key))
        return conn

    def _run(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """One statement on the lease connection; a lost connection is opened again once (and the
        lease taken again: another host may have recovered our runs meanwhile, DBOS fences their
        records)."""
        # lazy: psycopg (~90 ms) only with a PostgreSQL database for workflows
        import psycopg

        with self._mutex:
            for attempt in (1, 2):
                try:
                    if self._conn is None or self._conn.closed:
                        self._conn = self._connect()
                    return self._conn.execute(sql, params).fetchall()
                except psycopg.OperationalError:
                    with contextlib.suppress(Exception):
                        self._conn.close()
                    self._conn = None
                    if attempt == 2:
                        raise
        raise AssertionError("unreachable")

    def hold(self, executor_id: str) -> None:
        self._key = lease_key(executor_id)
        self._run("SELECT 1", ())  # connecting takes the lock

    def alive(self, executor_ids: set[str]) -> set[str]:
        rows = self._run(
            "SELECT objid::bigint FROM pg_locks WHERE locktype = 'advisory' AND classid = %s AND objsubid = 2 "
            "AND granted",
            (CLASS,),
        )
        held = {int(r[0]) for r in rows}
        return {e for e in executor_ids if lease_key(e) in held}

    def try_sweep(self) -> bool:
        return bool(self._run("SELECT pg_try_advisory_lock(%s, %s)", (CLASS, SWEEP))[0][0])

    def end_sweep(self) -> None:
        self._run("SELECT pg_advisory_unlock(%s, %s)", (CLASS, SWEEP))

    def close(self) -> None:
        with self._mutex:
            if self._conn is not None:
                with contextlib.suppress(Exception):
                    self._conn.close()
                self._conn = None


def _create_database(url: str, settings: dict[str, Any]) -> None:
    # lazy: psycopg (~90 ms) only with a PostgreSQL database for workflows
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict

    params = conninfo_to_dict(url)
    name = params.pop("dbname")
    with psycopg.connect(**{**params, **settings, "dbname": "postgres"}) as admin:
        try:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        except psycopg.errors.DuplicateDatabase:
            pass  # another process was first


class FileLeases:
    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self._fds: dict[str, int] = {}

    def _flock(self, name: str, *, wait: bool) -> int | None:
        """An open descriptor holding the exclusive flock of ``name``, or None when another holds it."""
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.dir / name, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            return None
        return fd

    def hold(self, executor_id: str) -> None:
        fd = self._flock(f"{executor_id}.lock", wait=True)
        assert fd is not None
        self._fds[executor_id] = fd

    def alive(self, executor_ids: set[str]) -> set[str]:
        living = set()
        for executor_id in executor_ids:
            if executor_id in self._fds:
                living.add(executor_id)
                continue
            if not (self.dir / f"{executor_id}.lock").exists():
                continue  # its lease was removed when it was found dead before
            fd = self._flock(f"{executor_id}.lock", wait=False)
            if fd is None:
                living.add(executor_id)
            else:  # dead: its file goes (an executor takes its lease before it runs anything)
                with contextlib.suppress(OSError):
                    (self.dir / f"{executor_id}.lock").unlink()
                os.close(fd)
        return living

    def try_sweep(self) -> bool:
        fd = self._flock("recovery.lock", wait=False)
        if fd is None:
            return False
        self._fds["recovery.lock"] = fd
        return True

    def end_sweep(self) -> None:
        fd = self._fds.pop("recovery.lock", None)
        if fd is not None:
            os.close(fd)

    def close(self) -> None:
        for name, fd in list(self._fds.items()):
            with contextlib.suppress(OSError):
                if name != "recovery.lock":
                    (self.dir / f"{name}.lock").unlink()
                os.close(fd)
        self._fds.clear()


def leases_for(url: str, sqlite_path: Path | None) -> Leases:
    """PostgreSQL leases, or lease files next to the SQLite database (``sqlite_path``)."""
    if sqlite_path is not None:
        return FileLeases(sqlite_path.with_suffix(".leases"))
    return PostgresLeases(url)
