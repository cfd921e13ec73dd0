"""Fixtures for the session-commands-through-RPC tests: a sandboxed host whose stdout is checked."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from atomic_host.testing import Host, start_host


@pytest.fixture
def base(tmp_path: Path) -> Path:
    """One sandbox root (agent dir, cwd, faux script) that several host runs can share."""
    (tmp_path / "tmp").mkdir()
    return tmp_path


@pytest.fixture
def srpc_host(base: Path, request: pytest.FixtureRequest) -> Callable[..., Any]:
    """``async with srpc_host(*cli_args, settings=..., env=...) as host``: every host started from
    it shares ``base`` (so a second host sees the first one's sessions); stdout is validated. With
    ``--session-store postgres`` the hosts share a schema of their own on the test server."""
    database: list[str] = []

    @asynccontextmanager
    async def factory(*args: str, env: dict[str, str] | None = None, **kw: Any) -> AsyncIterator[Host]:
        if "postgres" in args:
            if not database:
                database.append(request.getfixturevalue("postgres_server").fresh_url())
            env = {"ATOMIC_DATABASE_URL": database[0], **(env or {})}
        kw.setdefault("base", base)
        # the faux provider counts consumed lines per process: a new host starts from an empty script
        (kw["base"] / "faux.jsonl").write_text("")
        async with start_host(*args, env={"TMPDIR": str(base / "tmp"), **(env or {})}, **kw) as host:
            yield host
        host.assert_protocol_lines()

    factory.database = database  # type: ignore[attr-defined]  # [url] once a postgres host started
    return factory
