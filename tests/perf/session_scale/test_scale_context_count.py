"""``get_state``'s ``messageCount`` right after a switch comes from counts the session keeps
(entry types, per-type counts, the messages that are not objects), not from building the context.
Whatever the entries (compaction boundaries active or not, custom messages, branch summaries with
and without text, messages that are not objects, odd types) and whatever is appended, branched
or unpublished afterwards, the count is the length of the context built from scratch, and the
kept values are what the entries say."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from scale_helpers import reference_branch

from atomic_host.kit.messages import VERBATIM_STRATEGY
from atomic_host.kit.sessions.store import new_header
from atomic_host.kit.sessions.tree import Session
from atomic_host.session.context import branch_message_count, build_session_context
from atomic_host.testing import FlakyWriter

TS = "2026-01-01T00:00:00.000Z"
VERBATIM = {"strategy": VERBATIM_STRATEGY}  # an active boundary

BODY = st.sampled_from(
    [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [], "provider": "p", "model": "m"},
        {"role": "user"},  # no content: normalized, still one message
        "junk",
        None,
        [1],
    ]
)


@st.composite
def entry_fields(draw: Any) -> dict[str, Any]:
    """One entry's type and fields (no id, parent or timestamp)."""
    kind = draw(
        st.sampled_from(
            ["message", "message", "message", "custom_message", "branch_summary", "compaction", "custom", "label", 7]
        )
    )
    entry: dict[str, Any] = {"type": kind}
    if kind == "message":
        entry["message"] = draw(BODY)
    elif kind == "custom_message":
        entry.update(customType="c", content="x", display=True)
    elif kind == "branch_summary":
        entry.update(fromId="root", summary=draw(st.sampled_from(["s", "", None, 3])))
    elif kind == "compaction":
        entry.update(summary="sum", tokensBefore=1, details=draw(st.sampled_from([VERBATIM, {}, None])))
        entry["firstKeptEntryId"] = draw(st.sampled_from([None, "00000000", "00000002"]))
    elif kind == "label":
        entry.update(targetId="00000000", label="l")
    return entry


@st.composite
def sessions(draw: Any) -> list[dict[str, Any]]:
    """Entries as a file holds them: mostly one run (each the child of the one before), sometimes
    a parent elsewhere (a navigated-back session) or a first entry whose parent comes later."""
    count = draw(st.integers(0, 14))
    entries = []
    for i in range(count):
        entry = {**draw(entry_fields()), "id": f"{i:08x}", "timestamp": TS}
        link = draw(st.sampled_from(["previous"] * 6 + ["earlier", "later", "null"]))
        if link == "previous":
            entry["parentId"] = f"{i - 1:08x}" if i else None
        elif link == "earlier":
            entry["parentId"] = f"{draw(st.integers(0, max(i - 1, 0))):08x}" if i else None
        elif link == "later":
            entry["parentId"] = f"{draw(st.integers(i, 20)):08x}"
        else:
            entry["parentId"] = None
        entries.append(entry)
    return entries


def assert_counts_as_defined(session: Session) -> None:
    entries = session.entries
    types = [e.get("type") for e in entries]
    assert session.types() == types
    counts = Counter(types)
    for kind in ("message", "custom_message", "branch_summary", "compaction", "label", "custom"):
        assert session.count_of(kind) == counts[kind]
    odd = [i for i, e in enumerate(entries) if e.get("type") == "message" and not isinstance(e.get("message"), dict)]
    assert session.odd_message_positions() == odd
    branch = reference_branch(entries, session.leaf_id)
    if session.branch_is_every_entry():  # sound: never claimed for another branch
        assert branch == entries
    plain = (
        bool(entries)
        and entries[0].get("parentId") is None
        and all(entries[i].get("parentId") == entries[i - 1]["id"] for i in range(1, len(entries)))
        and session.leaf_id == entries[-1]["id"]
    )
    if plain:  # and claimed for every session never navigated back, leaf at the end
        assert session.branch_is_every_entry()
    count = branch_message_count(session)
    if session.branch_is_every_entry():
        assert count == len(build_session_context(branch).messages)
    else:
        assert count is None
    reopened = Session(session.header, entries)
    assert reopened.types() == types and reopened.odd_message_positions() == odd
    assert all(reopened.count_of(k) == n for k, n in counts.items() if isinstance(k, str))


OPS = st.lists(st.tuples(st.sampled_from(["append", "append", "leaf", "fail"]), st.integers(0, 40), entry_fields()))


@settings(max_examples=500)
@given(entries=sessions(), ops=OPS)
def test_message_count_is_the_built_context_after_any_appends(entries: list[dict[str, Any]], ops: Any) -> None:
    writer = FlakyWriter()
    session = Session(new_header("/p"), entries, writer=writer, persisted=True)
    assert_counts_as_defined(session)
    for op, n, fields in ops:
        if op == "leaf":  # navigate: the branch is no longer every entry (until it is again)
            ids = [e["id"] for e in session.entries]
            session.set_leaf(ids[n % len(ids)] if ids and n % 4 else None)
        else:
            writer.fail_next = op == "fail"
            kind, rest = fields["type"], {k: v for k, v in fields.items() if k != "type"}
            try:
                session.append(kind, **rest)
            except OSError:
                pass
        assert_counts_as_defined(session)
