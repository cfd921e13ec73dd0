"""Fixtures for the session storage tests (helpers live in session_helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from session_helpers import CWD

from builtin_plugins.stores import open_builtin_store as open_store


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    return tmp_path / "agent"


@pytest.fixture(params=["jsonl", "sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
def store(request: pytest.FixtureRequest, agent_dir: Path, monkeypatch: pytest.MonkeyPatch):
    if request.param == "postgres":  # a real server (tests/pg_helpers.py), a schema of its own
        monkeypatch.setenv("ATOMIC_DATABASE_URL", request.getfixturevalue("postgres_server").fresh_url())
    st = open_store(request.param, agent_dir, None, CWD)
    yield st
    st.close()


@pytest.fixture
def jsonl_store(agent_dir: Path):
    return open_store("jsonl", agent_dir, None, CWD)
