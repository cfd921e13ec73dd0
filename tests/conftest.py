"""Settings for the whole suite.

Hypothesis' per-example deadline is wall time: on a loaded 2-core CI machine (or with pytest-xdist
workers side by side) an ordinary example can exceed it and fail as "flaky" although nothing is
wrong. Cost that grows with the input is checked by the ×10/×100 tests, which measure CPU time or
count work; so the deadline is off for every property test.
"""

from hypothesis import HealthCheck, settings

settings.register_profile("atomic", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("atomic")
