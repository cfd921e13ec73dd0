"""Fixtures for the extension API tests: a scripted SSE server that records every request, so what
the provider hooks change is observed from outside the host."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from atomic_host import testing_sse as sse

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def sse_server() -> Iterator[Any]:
    with sse.SSEServer() as server:
        yield server
