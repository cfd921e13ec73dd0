"""Shared helpers for the tools-through-RPC tests: a private temp tree and stdout validation."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from atomic_host.testing import Host, start_host


@pytest.fixture
def tmp_root(tmp_path: Path) -> Path:
    """A private ``TMPDIR`` for the host, so its temp tree is ``<tmp_root>/atomic-<uid>``."""
    root = tmp_path / "tmp"
    root.mkdir()
    return root


@pytest.fixture
def rpc_host(tmp_root: Path) -> Callable[..., Any]:
    """``async with rpc_host(*cli_args, settings=..., env=...) as host`` with TMPDIR=tmp_root;
    checks every stdout line against the protocol when the block ends."""

    @asynccontextmanager
    async def factory(*args: str, env: dict[str, str] | None = None, **kw: Any) -> AsyncIterator[Host]:
        async with start_host(*args, env={"TMPDIR": str(tmp_root), **(env or {})}, **kw) as host:
            yield host
        host.assert_protocol_lines()

    return factory
