"""Fixtures for the black-box agent tests: a sandboxed host whose stdout is checked line by line."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from agent_sse import sse

from atomic_host.testing import Host, start_host


@pytest.fixture
def sse_server() -> Iterator[Any]:
    """A scripted SSE server on 127.0.0.1."""
    with sse.SSEServer() as server:
        yield server


@pytest.fixture
def agent_host() -> Callable[..., Any]:
    """``async with agent_host(*cli_args, settings=..., env=...) as host``; on exit every stdout
    line must be a valid protocol record."""

    @asynccontextmanager
    async def factory(*args: str, **kw: Any) -> AsyncIterator[Host]:
        async with start_host(*args, **kw) as host:
            yield host
        host.assert_protocol_lines()

    return factory
