"""Fixtures of the session-scale tests: both JSON engines (the cached texts are kept per engine)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from atomic_host.core import jsonfast


@pytest.fixture(params=["stdlib", "orjson"])
def engine(request: pytest.FixtureRequest) -> Iterator[str]:
    saved = jsonfast._fast
    if request.param == "orjson":
        assert jsonfast.load_fast_encoder(), "orjson is a dependency"
    else:
        jsonfast._fast = None
    yield request.param
    jsonfast._fast = saved
