"""Fixtures for the built-in tool tests: a real ToolContext over a temp working directory."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from tools_helpers import make_ctx

from atomic_host.contract.tools import ToolContext


@pytest.fixture(autouse=True)
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the temp tree (``<tmpdir>/atomic-<uid>``) at this test's own directory."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


@pytest.fixture
def work(tmp_path: Path) -> Path:
    d = tmp_path / "work"
    d.mkdir()
    return d


@pytest.fixture
def ctx(work: Path) -> ToolContext:
    return make_ctx(work)
