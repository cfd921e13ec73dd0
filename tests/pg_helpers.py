"""A real PostgreSQL server for the tests (Debian's ``postgresql`` package; .ci/run installs it).

``Postgres(bindir).start()`` runs ``initdb`` + ``pg_ctl start`` in a fresh temp dir on a free port
(trust auth, user ``atomic``); as root the server runs as the ``postgres`` user (PostgreSQL refuses
to run as root). The ``postgres_server`` fixture (tests/conftest.py) starts one per test process
and skips loudly when the package is missing; ``fresh_url`` gives each test its own schema, so
tests share the server without seeing each other's tables.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

MISSING = (
    "PostgreSQL IS NOT INSTALLED: the PostgreSQL tests did not run "
    "(apt-get install -y postgresql; .ci/run does this)"
)


POSTGRES_STORE = pytest.param(("--session-store", "postgres"), id="postgres", marks=pytest.mark.slow)
"""The ``--session-store postgres`` arguments of a host, as a parameter of the backend lists; the
``srpc_host`` fixture gives such a host ``ATOMIC_DATABASE_URL`` (a schema of the test's own)."""


def postgres_bin() -> Path | None:
    """The newest installed ``/usr/lib/postgresql/<v>/bin``, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Postgres:
    """One server in a fresh directory; ``listen`` are the addresses it listens on."""

    def __init__(self, bindir: Path, listen: str = "127.0.0.1", hba: tuple[str, ...] = ()) -> None:
        self.bindir = bindir
        self.listen = listen
        self.hba = hba
        """Lines added to pg_hba.conf (e.g. ``host all all 10.0.0.0/8 trust`` for a network namespace)."""
        self.root = Path(tempfile.mkdtemp(prefix="atomic-pg-"))
        self.root.chmod(0o755)
        self.data = self.root / "data"
        self.port = free_port()
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            self.as_user = ["runuser", "-u", "postgres", "--"]
            shutil.chown(self.root, "postgres", "postgres")

    def _run(self, *args: str) -> None:
        done = subprocess.run([*self.as_user, *args], capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed: {done.stdout}\n{done.stderr}")

    def start(self) -> Postgres:
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-U", "atomic", "--auth=trust", "-E", "UTF8")
        if self.hba:
            with (self.data / "pg_hba.conf").open("a") as fh:
                fh.write("".join(line + "\n" for line in self.hba))
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses='{self.listen}' -c fsync=off -c max_connections=200"
        )
        self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.root / "log"),
            "-w",
            "start",
        )
        return self

    def url(self, database: str = "atomic_workflows", host: str = "127.0.0.1") -> str:
        return f"postgresql://atomic@{host}:{self.port}/{database}"

    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run ``sql`` with the server's own psql; its output (unaligned, tuples only)."""
        done = subprocess.run(
            [str(self.bindir / "psql"), "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql, self.url(database)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"psql failed: {done.stderr}")
        return done.stdout

    def fresh_url(self, host: str = "127.0.0.1") -> str:
        """A URL on database ``postgres`` whose ``search_path`` is a new, empty schema."""
        schema = f"t_{uuid.uuid4().hex[:16]}"
        self.psql(f"CREATE SCHEMA {schema}")
        return f"{self.url('postgres', host)}?options={quote(f'-csearch_path={schema}')}"

    def stop(self) -> None:
        try:
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def stored_entries(url: str, session_id: str) -> list[dict[str, Any]]:
    """A session's entries as the ``postgres`` store holds them, read with psycopg directly."""
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT entry FROM atomic_entries WHERE session_id = %s ORDER BY seq", (session_id,))
        return [json.loads(entry) for (entry,) in rows]
