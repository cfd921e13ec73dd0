"""A session keeps where each run of parent-after-child entries starts, so ``branch`` copies
slices instead of walking entry by entry, and opening indexes entries with C loops. Whatever the
entries (duplicate or missing ids, parents anywhere, cycles, labels, names), and whatever is
appended, branched or unpublished afterwards, a session answers what the definitions answer."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from scale_helpers import reference_branch, reference_index

from atomic_host.kit.sessions.store import new_header
from atomic_host.kit.sessions.tree import Session, is_assistant_entry
from atomic_host.testing import FlakyWriter

TS = "2026-01-01T00:00:00.000Z"


def reference_state(entries: list[dict[str, Any]]) -> tuple[Any, ...]:
    """(leaf, labels, name, has_assistant) as the entry-by-entry definition gives them."""
    leaf, labels, info = None, {}, None
    for entry in entries:
        if isinstance(entry.get("id"), str):
            leaf = entry["id"]
        if entry.get("type") == "label" and isinstance(entry.get("targetId"), str):
            label = entry.get("label")
            if isinstance(label, str) and label:
                labels[entry["targetId"]] = label
            else:
                labels.pop(entry["targetId"], None)
        elif entry.get("type") == "session_info":
            info = entry
    name = info.get("name") if info else None
    name = (name.strip() or None) if isinstance(name, str) else None
    return leaf, labels, name, any(is_assistant_entry(e) for e in entries)


def assert_as_defined(session: Session) -> None:
    entries = session.entries
    ids = [e["id"] for e in entries if isinstance(e.get("id"), str)]
    for leaf in [*ids, "unknown0"]:
        assert session.branch(leaf) == reference_branch(entries, leaf), leaf
    assert session.branch() == reference_branch(entries, session.leaf_id)  # None: before the first entry
    leaf, labels, name, has_assistant = reference_state(entries)
    reopened = Session(session.header, entries)
    for s in (session, reopened):
        assert s.labels() == labels and s.name == name and s.has_assistant == has_assistant
        assert all(s.get_entry(i) is entries[p] for i, p in reference_index(entries).items())
    assert reopened.leaf_id == leaf
    for leaf in ids:
        assert reopened.branch(leaf) == session.branch(leaf)


ID = st.sampled_from(["a0000000", "b0000000", "c0000000", "d0000000", "e0000000", "f0000000"])
MESSAGE = st.sampled_from(
    [{"role": "user", "content": "q"}, {"role": "assistant", "content": [], "provider": "p", "model": "m"}, "junk"]
)


@st.composite
def loaded_entry(draw: Any, position: int, previous: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": draw(st.sampled_from(["message", "custom", "label", "session_info"]))}
    kind = draw(st.sampled_from(["unique", "duplicate", "none", "number", "missing"]))
    if kind == "unique":
        entry["id"] = f"{position:08x}"
    elif kind == "duplicate":
        entry["id"] = draw(ID)
    elif kind == "none":
        entry["id"] = None
    elif kind == "number":
        entry["id"] = position
    link = draw(st.sampled_from(["previous", "previous", "earlier", "later", "self", "unknown", "null", "missing"]))
    if link == "previous":  # the id of the entry before, whatever it is (a duplicate, None, …)
        entry["parentId"] = previous
    elif link in ("earlier", "later"):
        entry["parentId"] = f"{draw(st.integers(0, 30)):08x}" if link == "later" else draw(ID)
    elif link == "self":
        entry["parentId"] = entry.get("id")
    elif link == "unknown":
        entry["parentId"] = "unknown0"
    elif link == "null":
        entry["parentId"] = None
    if entry["type"] == "message":
        entry["message"] = draw(MESSAGE)
    elif entry["type"] == "label":
        entry["targetId"] = draw(ID | st.just(f"{max(position - 1, 0):08x}"))
        entry["label"] = draw(st.sampled_from(["x", "", None, 3]))
    elif entry["type"] == "session_info":
        entry["name"] = draw(st.sampled_from(["n", " ", None]))
    entry["timestamp"] = TS
    return entry


@st.composite
def loaded_entries(draw: Any) -> list[dict[str, Any]]:
    count = draw(st.integers(0, 12))
    shape = draw(st.sampled_from(["linear", "chained", "any"]))
    if shape != "any":  # every entry the child of the one before (most sessions); chained: ids repeat
        ids = [draw(ID) if shape == "chained" else f"{i:08x}" for i in range(count)]
        return [
            {"type": "custom", "id": ids[i], "parentId": ids[i - 1] if i else None, "timestamp": TS}
            for i in range(count)
        ]
    entries: list[dict[str, Any]] = []
    for i in range(count):
        entries.append(draw(loaded_entry(i, entries[-1].get("id") if entries else None)))
    return entries


OPS = st.lists(
    st.tuples(st.sampled_from(["append", "leaf", "fail", "label", "name", "assistant"]), st.integers(0, 40)),
    max_size=12,
)


@settings(max_examples=600)
@given(entries=loaded_entries(), ops=OPS)
def test_branches_and_state_are_the_definitions_after_any_appends(entries: list[dict[str, Any]], ops: Any) -> None:
    writer = FlakyWriter()
    session = Session(new_header("/p"), entries, writer=writer, persisted=True)
    assert_as_defined(session)
    for op, n in ops:
        ids = [e["id"] for e in session.entries if isinstance(e.get("id"), str)]
        if op == "leaf":  # navigate back: the next append starts a new run
            session.set_leaf(ids[n % len(ids)] if ids and n % 5 else None)
        elif op == "fail":
            writer.fail_next = True
            try:
                session.append("custom", customType="x")
            except OSError:
                pass
        elif op == "label" and ids:
            session.append_label(ids[n % len(ids)], "l" if n % 3 else None)
        elif op == "name":
            session.append_session_info(f"name {n}")
        elif op == "assistant":
            session.append_message({"role": "assistant", "content": [], "provider": "p", "model": "m"})
        else:
            session.append("custom", customType="x")
        assert_as_defined(session)
