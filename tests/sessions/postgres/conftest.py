"""Fixtures of the ``postgres`` session store tests: a schema of the test's own on the test process's server."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def pg_url(postgres_server: Any) -> str:
    """``ATOMIC_DATABASE_URL`` for this test: the shared server, a fresh schema."""
    return postgres_server.fresh_url()
