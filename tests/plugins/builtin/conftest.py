"""Fixtures for the tests of the built-in plugins' hooks: a sandbox root shared by several hosts."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def base(tmp_path: Path) -> Path:
    """One sandbox root (agent dir, cwd, faux script) that several host runs can share."""
    (tmp_path / "work").mkdir()
    (tmp_path / "agent").mkdir()
    return tmp_path
