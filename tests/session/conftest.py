"""Fixtures for the session storage tests (helpers live in session_helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from session_helpers import CWD

from builtin_plugins.stores import open_builtin_store as open_store


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    return tmp_path / "agent"


@pytest.fixture(params=["jsonl", "sqlite"])
def store(request: pytest.FixtureRequest, agent_dir: Path):
    st = open_store(request.param, agent_dir, None, CWD)
    yield st
    st.close()


@pytest.fixture
def jsonl_store(agent_dir: Path):
    return open_store("jsonl", agent_dir, None, CWD)
