"""The built-in session stores, contributed through ``register_session_stores``.

``jsonl`` (the default: Atomic's session files, one per session, under
``<agentDir>/sessions/--<cwd>--/``), ``sqlite`` (every session in ``sessions.db``), ``postgres``
(every session of many hosts in one PostgreSQL database; the ``postgres`` extra) and ``memory``
(nothing written). Each backend module is imported only when its kind is opened: neither
``sqlite3`` nor psycopg is on the startup path of a JSONL host. Blockable with ``disabledPlugins``; ``--no-session``
does not need this plugin.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from atomic_host import hookimpl
from atomic_host.contract.registrations import SessionStoreFactory, StoreOptions


def open_jsonl(options: StoreOptions) -> Any:
    """A :class:`~builtin_plugins.stores.jsonl.JsonlStore`; ``session_dir`` is a flat directory
    whose sessions are filtered by their header's cwd."""
    from builtin_plugins.stores.jsonl import JsonlStore  # lazy: only the chosen backend loads

    return JsonlStore(options.agent_dir, options.session_dir, fsync=_fsync(options), cwd=options.cwd)


def open_sqlite(options: StoreOptions) -> Any:
    """A :class:`~builtin_plugins.stores.sqlite.SqliteStore` on ``<session_dir or agent_dir>/sessions.db``."""
    from builtin_plugins.stores.sqlite import SqliteStore  # lazy: sqlite3 costs startup time

    db = Path(options.session_dir or options.agent_dir) / "sessions.db"
    return SqliteStore(db, fsync=_fsync(options), cwd=options.cwd)


def open_postgres(options: StoreOptions) -> Any:
    """A :class:`~builtin_plugins.stores.postgres.PostgresStore` on ``ATOMIC_DATABASE_URL`` (else
    settings ``database.url``); needs the ``postgres`` extra."""
    # lazy: kit.database (hashlib) only for the postgres store
    from atomic_host.kit.database import ENV_URL, database_url

    url = database_url(options.settings)
    if url is None:
        raise ValueError(
            f'The "postgres" session store needs a database: set {ENV_URL} or settings "database": {{"url": ...}}'
        )
    try:
        from builtin_plugins.stores.postgres import PostgresStore  # lazy: psycopg only when chosen
    except ImportError as exc:
        raise ImportError(
            f'The "postgres" session store needs psycopg ({exc}): pip install "atomic-host[postgres]"'
        ) from None
    return PostgresStore(url, fsync=_fsync(options), cwd=options.cwd)


def open_memory(options: StoreOptions) -> Any:
    """Sessions in this process only, never listed or written."""
    # lazy: the store module loads with the first session (--list-models and plugins open none)
    from atomic_host.kit.sessions.store import MemoryStore

    return MemoryStore()


def _fsync(options: StoreOptions) -> str:
    return "always" if options.fsync else "never"


STORES: tuple[SessionStoreFactory, ...] = (
    SessionStoreFactory("jsonl", open_jsonl, "Atomic's JSONL session files (the default)"),
    SessionStoreFactory("sqlite", open_sqlite, "every session in one SQLite database"),
    SessionStoreFactory("postgres", open_postgres, "every session in a PostgreSQL database shared by many hosts"),
    SessionStoreFactory("memory", open_memory, "in this process only; nothing is written"),
)


@hookimpl
def register_session_stores(register: Callable[[SessionStoreFactory], None]) -> None:
    for factory in STORES:
        register(factory)


def open_builtin_store(
    kind: str, agent_dir: str | Path, session_dir: str | Path | None = None, cwd: str = "", *, fsync: str = "always"
) -> Any:
    """Open a built-in store kind without a host (tests, benchmarks, scripts); ``fsync`` is a
    ``sessionFsync`` value."""
    factory = next((f for f in STORES if f.kind == kind), None)
    if factory is None:
        raise ValueError(f"Unknown built-in session store: {kind}")
    options = StoreOptions(Path(agent_dir), Path(session_dir) if session_dir else None, cwd, fsync != "never")
    return factory.open(options)  # type: ignore[operator]
