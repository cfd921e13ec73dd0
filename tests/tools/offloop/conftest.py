"""Fixtures for the off-the-event-loop tool tests: big trees built once per session."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from offloop_helpers import make_big_tree, make_wide_tree

from atomic_host.testing import Host, start_host


@pytest.fixture(scope="session")
def big_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """30 000 small text files and three 4 MiB ones (see ``make_big_tree``)."""
    root = tmp_path_factory.mktemp("offloop") / "big"
    make_big_tree(root)
    return root


@pytest.fixture(scope="session")
def wide_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """30 000 empty files under a 1 500-rule .gitignore (see ``make_wide_tree``)."""
    root = tmp_path_factory.mktemp("offloop") / "wide"
    make_wide_tree(root)
    return root


@pytest.fixture
def offloop_host(tmp_path: Path) -> Callable[..., Any]:
    """``async with offloop_host(cwd=tree) as host``: a host with its own TMPDIR; every stdout
    line is checked against the protocol when the block ends."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()

    @asynccontextmanager
    async def factory(*args: str, cwd: Path, **kw: Any) -> AsyncIterator[Host]:
        async with start_host(*args, cwd=cwd, base=tmp_path / "host", env={"TMPDIR": str(tmp)}, **kw) as host:
            yield host
        host.assert_protocol_lines()

    return factory
