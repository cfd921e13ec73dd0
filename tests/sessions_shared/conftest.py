"""Fixtures for the tests of one session touched by several host processes (issue 24)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import shared_helpers


@pytest.fixture(autouse=True)
def shared_database(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test on the ``postgres`` store gets a schema of its own on the test server, which every
    host it starts (``shared_helpers.host``) and every helper reading the store use."""
    store = getattr(request.node, "callspec", None) and request.node.callspec.params.get("store")
    if store and "postgres" in store:
        server = request.getfixturevalue("postgres_server")
        shared_helpers.DATABASE[:] = [server.fresh_url(), server.fresh_url()]  # this test's, another's
    try:
        yield
    finally:
        shared_helpers.DATABASE.clear()
