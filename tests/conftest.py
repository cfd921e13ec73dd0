"""Settings and shared fixtures for the whole suite.

Hypothesis' per-example deadline is wall time: on a loaded 2-core CI machine (or with pytest-xdist
workers side by side) an ordinary example can exceed it and fail as "flaky" although nothing is
wrong. Cost that grows with the input is checked by the ×10/×100 tests, which measure CPU time or
count work; so the deadline is off for every property test.
"""

import json
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from atomic_host.core import jsonfast
from atomic_host.kit import secrets

settings.register_profile("atomic", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("atomic")

# pytest caches each test module's assertion-rewritten bytecode, unless PYTHONDONTWRITEBYTECODE is
# set (as on this machine): then every run and every xdist worker rewrites all test modules again
# (collection 14-15 s CPU per process instead of 6 s). The cache is in __pycache__ (git-ignored).
sys.dont_write_bytecode = False

# A suite started in the background by a non-interactive shell (`cmd &` in a script or a CI step)
# inherits SIGINT ignored, and so would every host it starts; a test that sends a host SIGINT stands
# for a terminal's Ctrl-C, which the host only sees when the signal is not ignored (an ignored one
# stays ignored where the host leaves Python's own handling in place: `atomic login`, as asyncio.run
# does). The suite's processes take the default handling back, and their children with them.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Test folders are not packages (no __init__.py) and module names are unique across tests/
# (tests/unit/core/test_core_layout.py), so every folder goes on sys.path once, here, at the end (a
# helper never shadows an installed module): a test imports another folder's helper by its name,
# wherever the folders sit.
TESTS = Path(__file__).resolve().parent
for _folder in sorted({path.parent for path in TESTS.rglob("*.py")} - {TESTS}):
    if "__pycache__" not in _folder.parts and str(_folder) not in sys.path:
        sys.path.append(str(_folder))


def pytest_configure(config: pytest.Config) -> None:
    """Compile the host's packages once, before the workers start: most tests start ``atomic``
    subprocesses, which inherit PYTHONDONTWRITEBYTECODE and, without .pyc files in the checkout
    (a fresh CI clone), compiled every module they import again at every start."""
    if hasattr(config, "workerinput"):
        return
    import compileall

    root = TESTS.parent
    for package in ("atomic_host", "builtin_plugins"):
        compileall.compile_dir(root / package, quiet=1)


@pytest.fixture(autouse=True)
def fresh_secrets() -> Iterator[None]:
    """Each test starts with the host's credential set empty. Registrations last for the life of
    the process (kit/secrets.py), so a token registered in process by one test (the OAuth parsing
    properties register what hypothesis draws, e.g. "timestamp") masked JSON keys in later tests
    of the same worker: session tests saw '[REDACTED:oauth:access]' for "timestamp"."""
    saved = secrets._default
    secrets._default = secrets.SecretSet()
    try:
        yield
    finally:
        secrets._default = saved


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


# --- scheduling: longest test files first ----------------------------------------------------------
# With ``--dist loadfile`` a file runs whole on one worker, in the order of the collection
# (``--no-loadscope-reorder``). A long file taken last leaves one worker running alone at the end,
# so the files go longest first, by the seconds measured in file_durations.json. A file not in it
# (new) goes first of all: started early it cannot make the tail, however long it is.
# ``python -m pytest --store-durations`` measures a run and rewrites the file.

DURATIONS = Path(__file__).with_name("file_durations.json")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--store-durations", action="store_true", help=f"write per-file seconds to {DURATIONS.name}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    seconds: dict[str, float] = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
    first_seen: dict[str, int] = {}
    for item in items:
        first_seen.setdefault(item.nodeid.split("::", 1)[0], len(first_seen))

    def key(item: pytest.Item) -> tuple[float, int]:
        path = item.nodeid.split("::", 1)[0]
        return -seconds.get(path, float("inf")), first_seen[path]

    items.sort(key=key)  # stable: a file's tests keep their order


_measured: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Sum setup, call and teardown seconds per file (in the controller under xdist)."""
    path = report.nodeid.split("::", 1)[0]
    _measured[path] = _measured.get(path, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if config.getoption("--store-durations") and not hasattr(config, "workerinput") and _measured:
        stored: dict[str, float] = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
        stored.update({path: round(total, 1) for path, total in _measured.items()})
        DURATIONS.write_text(json.dumps(dict(sorted(stored.items())), indent=0) + "\n")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[object]:
    """A real PostgreSQL server for this test process (tests/pg_helpers.py); skips loudly when
    Debian's postgresql package is not installed. Tests take their own schema with ``fresh_url``."""
    from pg_helpers import MISSING, Postgres, postgres_bin

    bindir = postgres_bin()
    if bindir is None:
        pytest.skip(MISSING)
    server = Postgres(bindir).start()
    try:
        yield server
    finally:
        server.stop()
