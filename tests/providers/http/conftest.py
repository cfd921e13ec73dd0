from __future__ import annotations

from collections.abc import Iterator

import pytest

from atomic_host.testing_sse import SSEServer  # tests/providers is on sys.path (rootdir conftest, no __init__)


@pytest.fixture
def sse_server() -> Iterator[SSEServer]:
    """A scripted SSE server on 127.0.0.1 (see :mod:`atomic_host.testing_sse`)."""
    with SSEServer() as server:
        yield server
