"""Fixtures of the Gemini provider tests: the real local SSE server and a real host pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from gem_helpers import FAST_RETRY, FLASH, KEY, sse, write_models  # this dir is on sys.path (no __init__)

from atomic_host.testing import Host, start_host


@pytest.fixture
def gem_server() -> Iterator[Any]:
    """A scripted SSE server on 127.0.0.1."""
    with sse.SSEServer() as server:
        yield server


@pytest.fixture
def gemini_host(gem_server: Any, tmp_path: Path) -> Callable[..., Any]:
    """``async with gemini_host(model=..., settings=..., env=...) as host`` — a real
    ``atomic --mode rpc`` on the built-in ``google/<model>``, rerouted to the SSE server by
    models.json, authenticated by ``GEMINI_API_KEY``. On exit every stdout line must be a valid
    protocol record."""

    @asynccontextmanager
    async def factory(
        *args: str,
        model: str = FLASH,
        settings: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        provider: dict[str, Any] | None = None,
    ) -> AsyncIterator[Host]:
        write_models(tmp_path / "agent", gem_server.base_url, **(provider or {}))
        async with start_host(
            "--model",
            f"google/{model}",
            *args,
            base=tmp_path,
            settings=FAST_RETRY if settings is None else settings,
            env={"GEMINI_API_KEY": KEY} if env is None else env,
        ) as host:
            yield host
        host.assert_protocol_lines()

    return factory
