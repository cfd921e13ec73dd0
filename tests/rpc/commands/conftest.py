"""Helpers for the prompt-template and skill tests: a sandboxed host with a private HOME."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from atomic_host.testing import Host, start_host


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """Root of the host's agent dir (``agent/``), cwd (``work/``) and HOME (``home/``)."""
    (tmp_path / "home").mkdir()
    return tmp_path


@pytest.fixture
def cmd_host(sandbox: Path) -> Callable[..., Any]:
    """``async with cmd_host(*cli_args, settings=...) as host``; HOME is ``<sandbox>/home`` so a
    real ``~/.agents/skills`` never leaks in; every stdout line is validated at the end."""

    @asynccontextmanager
    async def factory(*args: str, env: dict[str, str] | None = None, **kw: Any) -> AsyncIterator[Host]:
        home = str(sandbox / "home")
        async with start_host(*args, base=sandbox, env={"HOME": home, **(env or {})}, **kw) as host:
            yield host
        host.assert_protocol_lines()

    return factory
