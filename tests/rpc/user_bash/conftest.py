"""The real host with the ``ext_ubops.py`` plugin loaded, a private TMPDIR and the runner's log."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from atomic_host.testing import Host, start_host

EXT = Path(__file__).parent / "ext_ubops.py"


@pytest.fixture
def runner_log(tmp_path: Path) -> Path:
    """What the plugin's runners noted (``exec …``, ``killed``, ``cancelled``), one line each."""
    log = tmp_path / "runner.log"
    log.touch()
    return log


@pytest.fixture
def tmp_root(tmp_path: Path) -> Path:
    """The host's ``TMPDIR``, so its temp tree is ``<tmp_root>/atomic-<uid>``."""
    root = tmp_path / "tmp"
    root.mkdir()
    return root


@pytest.fixture
def ops_host(runner_log: Path, tmp_root: Path) -> Callable[..., Any]:
    """``async with ops_host(*cli_args, settings=..., env=...) as host``; every stdout line is
    checked against the protocol when the block ends."""

    @asynccontextmanager
    async def factory(*args: str, env: dict[str, str] | None = None, **kw: Any) -> AsyncIterator[Host]:
        extra = {"TMPDIR": str(tmp_root), "UBOPS_LOG": str(runner_log), **(env or {})}
        async with start_host("-e", str(EXT), *args, env=extra, **kw) as host:
            yield host
        host.assert_protocol_lines()

    return factory
