"""Work, not time: the session commands' host code is counted in executed lines (``sys.settrace``,
only files of ``atomic_host`` and ``builtin_plugins``) and parsed bytes at ×1, ×10 and ×100 the
size, so a cost that grows faster than the session shows up on any machine, loaded or not.

Opening, branching and a first read may grow with the session (linearly: ≤ 12× the work for
10× the size); a read after a few appends, a cursor page of ``get_entries`` and the tree of an
unchanged session must not grow at all."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from scale_helpers import user, varied

from atomic_host.core import jsonfast
from atomic_host.kit import _fast
from atomic_host.kit.sessions import jsonl as codec
from atomic_host.kit.sessions.store import new_header
from atomic_host.kit.sessions.tree import ForkMessages
from atomic_host.session.context import build_session_context
from atomic_host.session.stats import Totals
from atomic_host.session.tree import cached_tree, entries_json, tree_json
from builtin_plugins.stores import open_builtin_store

pytestmark = pytest.mark.slow  # sessions x10 and x100

ROOTS = tuple(str(Path(sys.modules[m].__file__ or "").resolve().parent) for m in ("atomic_host", "builtin_plugins"))
CWD = "/scale/project"
SIZES = (20, 200, 2000)  # turns: ×1, ×10, ×100


def traced(fn: Callable[[], Any]) -> tuple[int, Any]:
    """(lines of host code ``fn()`` executes in this thread, what it returned)."""
    count = 0
    mine: dict[str, bool] = {}

    def local(frame: Any, event: str, _arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def tracer(frame: Any, _event: str, _arg: Any) -> Any:
        path = frame.f_code.co_filename
        hit = mine.get(path)
        if hit is None:
            hit = mine[path] = path.startswith(ROOTS)
        return local if hit else None

    sys.settrace(tracer)
    try:
        result = fn()
    finally:
        sys.settrace(None)
    return count, result


def lines_of(fn: Callable[[], Any]) -> int:
    """Lines of host code ``fn()`` executes (this thread)."""
    return traced(fn)[0]


def linear(work: list[int], slack: float = 12.0) -> None:
    """Each ×10 step costs at most ``slack``× the previous one (10× for linear work, plus room for
    fixed costs not growing at all)."""
    for small, big in itertools.pairwise(work):
        assert big <= slack * max(small, 1), work


def flat(work: list[int], slack: float = 2.0) -> None:
    """The work does not depend on the session's size (×100 costs at most ``slack``× the ×1)."""
    assert max(work) <= slack * max(min(work), 1), work


@pytest.fixture(params=["jsonl", "sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
def stored(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[[int], tuple[Any, str]]:
    """``stored(turns)``: (an open store, the id of a varied ``turns``-turn session in it)."""
    stores: list[Any] = []
    if request.param == "postgres":  # a real server (tests/pg_helpers.py), a schema of this test's own
        monkeypatch.setenv("ATOMIC_DATABASE_URL", request.getfixturevalue("postgres_server").fresh_url())

    def make(turns: int) -> tuple[Any, str]:
        store = open_builtin_store(request.param, tmp_path / f"agent{turns}", None, CWD, fsync="never")
        stores.append(store)
        session = varied(store.new_session(CWD), turns)
        session.close()
        return store, session.id

    yield make
    for store in stores:
        store.close()


def test_opening_parses_each_byte_once_and_costs_linear_work(stored: Any, monkeypatch: Any) -> None:
    # both stores parse entries with jiter (json.loads on the plain path): JSONL a line at a time,
    # SQLite rows in one array
    if _fast.PLAIN:
        import json as parser

        name = "loads"
    else:
        import jiter as parser

        name = "from_json"
    parsed = 0
    real = getattr(parser, name)

    def counting(data: bytes, *args: Any, **options: Any) -> Any:
        nonlocal parsed
        parsed += len(data)
        return real(data, *args, **options)

    monkeypatch.setattr(parser, name, counting)
    work, per_entry = [], []
    for turns in SIZES:
        store, session_id = stored(turns)
        parsed = 0
        lines, session = traced(lambda s=store, i=session_id: s.open(i))
        work.append(lines)
        size = sum(len(codec.encode_line(e)) - 1 for e in session.entries)  # as stored, without the LFs
        assert size <= parsed <= 1.2 * size + 4096, (parsed, size)  # every entry byte parsed, once
        per_entry.append(work[-1] / len(session.entries))
        session.close()
    linear(work)
    assert per_entry[-1] <= 1.2 * per_entry[1], per_entry


def test_a_switch_builds_branch_and_context_in_linear_work() -> None:
    from atomic_host.kit.sessions.store import MemoryStore

    branch_work, context_work = [], []
    for turns in SIZES:
        session = varied(MemoryStore().new_session(CWD), turns)
        lines, branch = traced(session.branch)
        branch_work.append(lines)
        context_work.append(lines_of(lambda b=branch: build_session_context(b)))
    linear(branch_work)
    linear(context_work)


def _reads(session: Any) -> None:
    """What get_state, get_session_stats, get_fork_messages, get_entries and get_tree read (their
    responses' encoding is one C call over the result, not counted here)."""
    session.name  # noqa: B018
    session.view(Totals)
    session.view(ForkMessages)
    entries_json(session)
    tree_json(session)


def test_reading_again_after_a_few_appends_costs_the_same_at_any_size(engine: str) -> None:
    from atomic_host.kit.sessions.store import MemoryStore

    first, again, unchanged_tree = [], [], []
    for turns in SIZES:
        session = varied(MemoryStore().new_session(CWD), turns)
        first.append(lines_of(lambda s=session: _reads(s)))
        unchanged_tree.append(lines_of(lambda s=session: cached_tree(s)))
        for i in range(3):
            session.append_message(user(i))
        again.append(lines_of(lambda s=session: (s.name, s.view(Totals), s.view(ForkMessages), entries_json(s))))
    linear(first)
    flat(again)
    flat(unchanged_tree)
    assert again[-1] * 20 < first[-1], (again, first)  # the views did not walk the session again


def test_a_tree_after_appends_costs_linear_work(engine: str) -> None:
    from atomic_host.kit.sessions.store import MemoryStore

    work = []
    for turns in SIZES:
        session = varied(MemoryStore().new_session(CWD), turns)
        tree_json(session)
        session.append_message(user(0))
        work.append(lines_of(lambda s=session: tree_json(s)))
    linear(work)


def test_a_cursor_page_costs_the_same_at_any_size(stored: Any) -> None:
    work = []
    for turns in SIZES:
        store, session_id = stored(turns)
        session = store.open(session_id)
        cursor = session.entries[-11]["id"]
        work.append(lines_of(lambda s=session, c=cursor: jsonfast.dumps({"entries": s.entries_since(c)})))
        session.close()
    flat(work)


@pytest.mark.parametrize(
    ("kind", "counts"),
    [
        ("jsonl", (4, 40, 400)),
        ("sqlite", (10, 100, 1000)),
        pytest.param("postgres", (10, 100, 1000), marks=pytest.mark.slow),
    ],
)
def test_listing_costs_linear_work_in_the_number_of_sessions(
    kind: str, counts: Any, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    from atomic_host.kit.sessions.store import MemoryStore

    template = varied(MemoryStore().new_session(CWD), 2)
    work = []
    for count in counts:
        if kind == "postgres":  # each count on an empty schema of its own
            monkeypatch.setenv("ATOMIC_DATABASE_URL", request.getfixturevalue("postgres_server").fresh_url())
        store = open_builtin_store(kind, tmp_path / f"{kind}{count}", None, CWD, fsync="never")
        for _ in range(count):
            store.put(new_header(CWD), template.entries).close()
        lines, listed = traced(lambda s=store: s.list(CWD))
        work.append(lines)
        assert len(listed) == count
        store.close()
    linear(work)


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
def test_a_table_store_listing_runs_no_host_code_per_session(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The records are kept in the rows on append: a listing parses each once (no host code per
    session: C loops), and a listing of unchanged sessions reuses them; one appended session
    costs the same at 10 or 1,000 sessions."""
    from atomic_host.kit.sessions.store import MemoryStore

    template = varied(MemoryStore().new_session(CWD), 2)
    first, warm, after_append = [], [], []
    for count in (10, 100, 1000):
        if kind == "postgres":  # each count on an empty schema of its own
            monkeypatch.setenv("ATOMIC_DATABASE_URL", request.getfixturevalue("postgres_server").fresh_url())
        store = open_builtin_store(kind, tmp_path / f"{kind}{count}", None, CWD, fsync="never")
        for _ in range(count):
            store.put(new_header(CWD), template.entries).close()
        first.append(lines_of(lambda s=store: s.list(CWD)))
        warm.append(lines_of(lambda s=store: s.list(CWD)))
        session = store.open(store.list(CWD)[-1]["id"])
        session.append_message(user(count, "one more"))
        session.close()
        after_append.append(lines_of(lambda s=store: s.list(CWD)))
        store.close()
    flat(first)
    flat(warm)
    flat(after_append)


@pytest.mark.slow
def test_a_20000_turn_session_opens_and_reads_in_linear_work(tmp_path: Path) -> None:
    """×1000: opening (parse and index) and the first reads grow with the file, a read after a
    few appends does not grow at all."""
    open_work, first, again = [], [], []
    for turns in (*SIZES, 20_000):
        store = open_builtin_store("jsonl", tmp_path / f"a{turns}", None, CWD, fsync="never")
        session = varied(store.new_session(CWD), turns)
        session.close()
        lines, session = traced(lambda s=store, i=session.id: s.open(i))
        open_work.append(lines)
        first.append(lines_of(lambda s=session: _reads(s)))
        session.append_message(user(0))
        again.append(lines_of(lambda s=session: (s.name, s.view(Totals), s.view(ForkMessages), entries_json(s))))
        session.close()
        store.close()
    linear(open_work)
    linear(first)
    flat(again)
