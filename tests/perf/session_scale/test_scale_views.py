"""The cached session views (name, fork messages, stats totals, each entry's JSON, the tree text)
answer exactly what a scan of the whole session answers, whatever was appended, labelled,
branched or unpublished (a failed write) between two reads, under either JSON engine."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scale_helpers import (
    assistant,
    reference_branch,
    reference_entries_text,
    reference_fork_messages,
    reference_name,
    reference_totals,
    reference_tree_text,
    tool_result,
    totals_of,
    user,
    varied,
)

from atomic_host.core import jsonfast
from atomic_host.kit.sessions.ids import iso_from_ms, new_entry_id
from atomic_host.kit.sessions.store import MemoryStore, new_header
from atomic_host.kit.sessions.tree import Session
from atomic_host.session.stats import Totals
from atomic_host.session.tree import cached_tree, entries_json, tree_json, tree_json_snapshot
from atomic_host.testing import FlakyWriter


def check_views(session: Session) -> None:
    """Every view against its definition; the cached tree too, once a get_tree left it."""
    assert session.name == reference_name(session)
    assert session.fork_messages() == reference_fork_messages(session)
    assert totals_of(session.view(Totals)) == reference_totals(session)
    assert entries_json(session).data == reference_entries_text(session).encode()
    tree = tree_json(session)
    assert tree.data == reference_tree_text(session).encode()
    assert cached_tree(session) == tree


operation = st.one_of(
    st.tuples(st.just("user"), st.text(max_size=8)),
    st.tuples(st.just("assistant"), st.booleans()),
    st.tuples(st.just("tool_result"), st.integers(0, 5)),
    st.tuples(st.just("label"), st.integers(0, 10**6), st.sampled_from([None, "", "a", "b ✓"])),
    st.tuples(st.just("info"), st.sampled_from(["", " x ", "name \u2028"])),
    st.tuples(st.just("summary"), st.integers(0, 3)),
    st.tuples(st.just("leaf"), st.integers(0, 10**6)),
    st.tuples(
        st.just("graft"), st.integers(0, 10**6), st.integers(0, 10**6), st.sampled_from(["child", "self", "orphan"])
    ),
    st.tuples(st.just("fail"), st.just(0)),
    st.tuples(st.just("read"), st.just(0)),
)


def apply(session: Session, writer: FlakyWriter, op: tuple[Any, ...], n: int) -> None:
    kind = op[0]
    try:
        if kind == "user":
            session.append_message(user(n, op[1]))
        elif kind == "assistant":
            session.append_message(assistant(n, tool=op[1]))
        elif kind == "tool_result":
            session.append_message(tool_result(op[1]))
        elif kind == "label" and session.entries:
            session.append_label(session.entries[op[1] % len(session.entries)]["id"], op[2])
        elif kind == "info":
            session.append_session_info(op[1])
        elif kind == "summary":
            session.append("branch_summary", fromId=session.leaf_id, summary=f"s{op[1]}", usage=assistant(n)["usage"])
        elif kind == "leaf" and session.entries:
            session.set_leaf(session.entries[op[1] % len(session.entries)]["id"])
        elif kind == "graft":
            # an entry as an imported file may hold it: any timestamp (children sort by it), a
            # parent anywhere, itself or unknown (a root)
            stamp = iso_from_ms(1_700_000_000_000 + op[2] * 997)
            entry_id = new_entry_id(session)
            parents = {"child": session.entries[op[1] % len(session.entries)]["id"] if session.entries else None,
                       "self": entry_id, "orphan": "ffffffff0"}  # fmt: skip
            session.append_entry({"type": "custom", "id": entry_id, "parentId": parents[op[3]], "timestamp": stamp})
        elif kind == "fail":
            writer.fail_next = True
        elif kind == "read":
            check_views(session)
    except OSError:
        pass  # the failed write: the entry was unpublished


@settings(max_examples=120, deadline=None)
@given(ops=st.lists(operation, max_size=40), engine_name=st.sampled_from(["stdlib", "orjson"]))
def test_views_equal_a_whole_scan_after_any_history(ops: list[tuple[Any, ...]], engine_name: str) -> None:
    saved = jsonfast._fast
    try:
        if engine_name == "orjson":
            jsonfast.load_fast_encoder()
        else:
            jsonfast._fast = None
        writer = FlakyWriter()
        session = Session(new_header("/p"), writer=writer, persisted=True)
        for n, op in enumerate(ops):
            apply(session, writer, op, n)
        check_views(session)
    finally:
        jsonfast._fast = saved


def test_an_unpublished_entry_leaves_no_trace_in_the_views(engine: str) -> None:
    writer = FlakyWriter()
    session = varied(Session(new_header("/p"), writer=writer, persisted=True), 12)
    check_views(session)
    count = len(session.entries)
    writer.fail_next = True
    with pytest.raises(OSError):
        session.append_session_info("never written")
    writer.fail_next = True
    with pytest.raises(OSError):
        session.append_message(user(99, "never written either"))
    assert len(session.entries) == count
    check_views(session)  # caught up on the entries that stayed, not on the unpublished ones
    session.append_message(user(100, "written"))
    check_views(session)


def test_a_view_left_behind_by_a_snapshot_still_answers_the_session(engine: str) -> None:
    """get_tree encodes a snapshot in a thread while the session goes on: what it built is the tree
    of the snapshot, and the next read of the session catches up from there."""
    session = varied(MemoryStore().new_session("/p"), 8)
    encode = tree_json_snapshot(session)
    before = reference_tree_text(session)
    session.append_message(user(50, "after the snapshot"))
    assert encode().data == before.encode()
    assert cached_tree(session) is None  # the session has moved on
    check_views(session)


def test_the_tree_text_is_kept_per_json_engine() -> None:
    saved = jsonfast._fast
    try:
        jsonfast._fast = None
        session = varied(MemoryStore().new_session("/p"), 4)
        standard = tree_json(session)
        assert b"\\u2713" in standard.data  # the standard encoder escapes non-ASCII
        jsonfast.load_fast_encoder()
        assert cached_tree(session) is None
        fast = tree_json(session)
        assert "✓".encode() in fast.data and fast.data == reference_tree_text(session).encode()
    finally:
        jsonfast._fast = saved


def test_fork_messages_hands_out_copies() -> None:
    session = varied(MemoryStore().new_session("/p"), 3)
    first = session.fork_messages()
    first[0]["text"] = "changed by a caller"
    first.clear()
    assert session.fork_messages() == reference_fork_messages(session)


def _iso_by_datetime(ms: float) -> str:
    from datetime import UTC, datetime

    dt = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


@settings(max_examples=3000)
@given(
    ms=st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.floats(0, 2.6e14),
        st.integers(-(2**50), 2**50),
        st.integers(1_600_000_000_000, 1_800_000_000_000).map(lambda v: v + 0.4995),
        st.integers(0, 10**12).map(lambda v: v / 7),
    )
)
def test_listing_timestamps_are_the_datetime_library_s_text(ms: float) -> None:
    """``iso_from_ms`` formats by hand (list_sessions formats two per session): the same text as
    ``datetime.fromtimestamp``, or the same error, for any number."""
    from atomic_host.kit.sessions.ids import iso_from_ms

    try:
        expected: object = _iso_by_datetime(ms)
    except (ValueError, OverflowError, OSError) as exc:
        expected = type(exc)
    try:
        got: object = iso_from_ms(ms)
    except (ValueError, OverflowError, OSError) as exc:
        got = type(exc)
    assert got == expected


@settings(max_examples=300)
@given(parents=st.lists(st.one_of(st.none(), st.integers(-3, 40), st.just("self")), max_size=30), data=st.data())
def test_branch_is_the_checked_walk_for_any_parent_links(parents: list[Any], data: Any) -> None:
    """Parents before, after or equal to their child, unknown, cycles: the fast walk (falling
    positions need no seen set) gives what the checked walk gives, from any leaf."""
    ids = [f"{i:08x}" for i in range(len(parents))]
    entries = []
    for i, parent in enumerate(parents):
        if parent == "self":
            link: str | None = ids[i]
        elif isinstance(parent, int):
            link = ids[parent] if 0 <= parent < len(ids) else "unknown0"
        else:
            link = None
        entries.append({"type": "custom", "id": ids[i], "parentId": link, "timestamp": "2026-01-01T00:00:00.000Z"})
    session = Session(new_header("/p"), entries)
    leaf = data.draw(st.sampled_from(ids)) if ids else None
    assert session.branch(leaf) == reference_branch(session.entries, leaf)
