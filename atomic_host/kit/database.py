"""A shared PostgreSQL database: where its URL comes from, how it is shown, how a dead peer is noticed.

Used by the ``postgres`` session store and the workflows (one database, several hosts, several
machines). Standard library only: the driver (psycopg) is imported by whoever connects.

- :func:`database_url`: ``ATOMIC_DATABASE_URL``, else settings ``database.url``.
- :func:`masked_url`: the URL with its password replaced, for anything the host prints or stores.
- :data:`CLIENT_KEEPALIVES` / :data:`SERVER_KEEPALIVES`: the connection settings that make a dead
  machine's connection (and so its advisory locks) go away in about 10 s (docs/scale.md).
- :func:`advisory_key`: a 64-bit advisory lock key for a name in a namespace.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any

ENV_URL = "ATOMIC_DATABASE_URL"

CLIENT_KEEPALIVES: dict[str, str] = {
    "connect_timeout": "5",
    "keepalives": "1",
    "keepalives_idle": "4",
    "keepalives_interval": "2",
    "keepalives_count": "3",
    "tcp_user_timeout": "10000",
}
"""libpq parameters added to a URL that does not set them: this host notices a dead server (or a
cut link) within ~10 s, whether it is idle (keepalives: 4 s + 3 probes 2 s apart) or waiting for
an answer (``tcp_user_timeout``, ms), instead of the kernel's default of two hours or more."""

SERVER_KEEPALIVES: dict[str, int] = {
    "tcp_keepalives_idle": 4,
    "tcp_keepalives_interval": 2,
    "tcp_keepalives_count": 3,
    "tcp_user_timeout": 10000,
}
"""The server's side of the same (``SET`` on each connection, so no postgresql.conf change is
needed): the server ends the backend of a machine that died or lost its link within ~10 s, which
frees the advisory locks that backend held."""

_PASSWORD_IN_URL = re.compile(r"^([a-z][a-z0-9+.-]*://[^:/@?#]*):[^@/?#]*@", re.IGNORECASE)
_PASSWORD_PARAM = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]*)", re.IGNORECASE)


def database_url(settings: Any = None) -> str | None:
    """The shared database's URL: ``ATOMIC_DATABASE_URL``, else ``settings.get("database.url")``."""
    url = os.environ.get(ENV_URL)
    if url:
        return url
    value = settings.get("database.url") if settings is not None else None
    return value if isinstance(value, str) and value else None


def masked_url(url: str) -> str:
    """``url`` (a URL or a ``key=value`` conninfo) with any password replaced by ``***``."""
    return _PASSWORD_PARAM.sub(r"\1***", _PASSWORD_IN_URL.sub(r"\1:***@", url))


def advisory_key(namespace: str, name: str) -> int:
    """A signed 64-bit key for ``pg_advisory_lock(bigint)``: one namespace per kind of lock (the
    session store uses ``"atomic-session"``), so two kinds never share a key by accident."""
    digest = hashlib.blake2b(f"{namespace}\0{name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


__all__ = [
    "CLIENT_KEEPALIVES",
    "ENV_URL",
    "SERVER_KEEPALIVES",
    "advisory_key",
    "database_url",
    "masked_url",
]
