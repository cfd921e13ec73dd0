"""Fixtures of the ``postgres`` session store tests: a schema of the test's own on the test process's server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pg_helpers import MISSING, Postgres, postgres_bin
from pgs_helpers import Netns


@pytest.fixture
def pg_url(postgres_server: Any) -> str:
    """``ATOMIC_DATABASE_URL`` for this test: the shared server, a fresh schema."""
    return postgres_server.fresh_url()


@pytest.fixture(scope="module")
def netns() -> Iterator[Netns]:
    """A network namespace whose link to this one a test can cut (skipped loudly where none can be made)."""
    try:
        ns = Netns()
    except OSError as exc:
        pytest.skip(f"NO NETWORK NAMESPACE ({exc}): the link-cut test did not run (it needs root and `ip netns`)")
    try:
        yield ns
    finally:
        ns.close()


@pytest.fixture(scope="module")
def wide_server(netns: Netns) -> Iterator[Postgres]:
    """A server that the namespace reaches too (listening on every address, trust from 10.0.0.0/8)."""
    bindir = postgres_bin()
    if bindir is None:
        pytest.skip(MISSING)
    server = Postgres(bindir, listen="*", hba=("host all all 10.0.0.0/8 trust",)).start()
    try:
        yield server
    finally:
        server.stop()
