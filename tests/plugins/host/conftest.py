"""Fixtures for the black-box host tests (helpers live in ``host_helpers``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from atomic_host.testing import Host, start_host


@pytest.fixture
def rpc_host(tmp_path: Path) -> Callable[..., Any]:
    """``async with rpc_host(*cli_args, settings=..., env=..., cwd=...) as host``; validates every stdout
    line against the protocol when the block ends. Hosts live under ``tmp_path``."""

    @asynccontextmanager
    async def factory(*args: str, **kw: Any) -> AsyncIterator[Host]:
        kw.setdefault("base", tmp_path)
        async with start_host(*args, **kw) as host:
            yield host
        host.assert_protocol_lines()

    return factory
