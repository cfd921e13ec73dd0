"""Fixtures for the extension API tests: a scripted SSE server that records every request, so what
the provider hooks change is observed from outside the host."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from atomic_host import testing_sse as sse


@pytest.fixture
def sse_server() -> Iterator[Any]:
    with sse.SSEServer() as server:
        yield server
