"""Fixtures of the vendor-conformance tests: a scripted SSE server and a host pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from vendor_helpers import FAST_RETRY, sse, write_models  # tests/conformance/vendor is on sys.path (no __init__)

from atomic_host.testing import Host, start_host


@pytest.fixture
def sse_server() -> Iterator[Any]:
    """A scripted SSE server on 127.0.0.1."""
    with sse.SSEServer() as server:
        yield server


@pytest.fixture
def vendor_host(sse_server: Any, tmp_path: Path) -> Callable[..., Any]:
    """``async with vendor_host(api, settings=..., env=..., model={...}) as host`` — a real
    ``atomic --mode rpc`` using model ``vendor/m1`` of ``api`` at the SSE server. On exit every
    stdout line must be a valid protocol record."""

    @asynccontextmanager
    async def factory(
        api: str,
        *args: str,
        settings: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        model: dict[str, Any] | None = None,
        base_url: str | None = None,
    ) -> AsyncIterator[Host]:
        write_models(tmp_path / "agent", base_url or sse_server.base_url, api, **(model or {}))
        async with start_host(
            "--model", "vendor/m1", *args, base=tmp_path, settings=FAST_RETRY if settings is None else settings, env=env
        ) as host:
            yield host
        host.assert_protocol_lines()

    return factory
