"""tests/perf/tactics pins the speed tactics (README.md): with ``ATOMIC_PLAIN=1`` they are off, so these skip."""

from __future__ import annotations

import pytest

from atomic_host.kit import _fast


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _fast.PLAIN:
        return
    skip = pytest.mark.skip(reason="ATOMIC_PLAIN=1: the speed tactics these tests pin are off")
    for item in items:
        if "perf/tactics/" in item.nodeid:
            item.add_marker(skip)
