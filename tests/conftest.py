"""Settings and shared fixtures for the whole suite.

Hypothesis' per-example deadline is wall time: on a loaded 2-core CI machine (or with pytest-xdist
workers side by side) an ordinary example can exceed it and fail as "flaky" although nothing is
wrong. Cost that grows with the input is checked by the ×10/×100 tests, which measure CPU time or
count work; so the deadline is off for every property test.
"""

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from atomic_host.core import jsonfast

settings.register_profile("atomic", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("atomic")


@pytest.fixture(params=["stdlib", "orjson"])
def engine(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run the test once with each protocol JSON engine (the stdlib encoder, then orjson)."""
    saved = jsonfast._fast
    if request.param == "orjson":
        assert jsonfast.load_fast_encoder(), "orjson is a dependency"
    else:
        jsonfast._fast = None
    yield request.param
    jsonfast._fast = saved
