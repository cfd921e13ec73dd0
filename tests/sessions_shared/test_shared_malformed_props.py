"""Ill-typed session entries are repaired on load (issue 24), found by hypothesis: whatever value a
hand edit puts where a session holds a message, a content list, a block's text, a tool call's
arguments or a usage number, the loaded session answers every read (stats, context, tree, fork
messages, listing, export) and converts for every provider without an exception; the repair is a
fixpoint (a repaired session needs no repair); a well-formed session comes out as it went in;
and the cost is linear (lines of host code executed at ×1, ×10, ×100 the size).
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from atomic_host.kit.llm.context import transform_messages
from atomic_host.kit.messages import convert_to_llm, message_text
from atomic_host.kit.sessions.listing import ListingState
from atomic_host.kit.sessions.repair import repair_entries
from atomic_host.kit.sessions.tree import Session
from atomic_host.session.context import branch_message_count, build_session_context
from atomic_host.session.stats import Totals, context_estimate
from builtin_plugins.export_html.page import render_html
from builtin_plugins.providers import anthropic, google, openai_completions, openai_responses

HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"}
MODEL = {"id": "m1", "api": "anthropic-messages", "provider": "p", "input": ["text", "image"], "reasoning": True,
         "contextWindow": 100000, "maxTokens": 1000}  # fmt: skip
USAGE = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
         "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0, "total": 0.3}}  # fmt: skip


def _turn(i: int) -> list[dict[str, Any]]:
    """A user prompt, an assistant reply with thinking, text and a tool call, its result, an answer."""
    call = {"type": "toolCall", "id": f"call{i}", "name": "bash", "arguments": {"command": "ls"}}
    assistant = {"role": "assistant", "api": "anthropic-messages", "provider": "p", "model": "m1", "usage": USAGE,
                 "stopReason": "toolUse", "timestamp": 2,
                 "content": [{"type": "thinking", "thinking": "hm", "thinkingSignature": "c2ln"},
                             {"type": "text", "text": "Running it."}, call]}  # fmt: skip
    return [
        {"role": "user", "content": [{"type": "text", "text": f"question {i}"},
                                     {"type": "image", "data": "aGk=", "mimeType": "image/png"}], "timestamp": 1},
        assistant,
        {"role": "toolResult", "toolCallId": f"call{i}", "toolName": "bash", "isError": False, "timestamp": 3,
         "content": [{"type": "text", "text": "file.txt"}]},
        {**assistant, "stopReason": "stop", "content": [{"type": "text", "text": f"answer {i}"}]},
        {"role": "user", "content": f"plain {i}", "timestamp": 4},
    ]  # fmt: skip


def session_entries(turns: int) -> list[dict[str, Any]]:
    """A well-formed session: message entries, a branch summary with usage, a custom message."""
    entries: list[dict[str, Any]] = []
    parent = None
    for i in range(turns):
        records: list[dict[str, Any]] = [{"type": "message", "message": m} for m in _turn(i)]
        records.append({"type": "branch_summary", "fromId": "root", "summary": f"summary {i}", "usage": USAGE})
        records.append({"type": "custom_message", "customType": "note", "content": f"note {i}", "display": True})
        for record in records:
            entry_id = f"{len(entries):08x}"
            entries.append({**record, "id": entry_id, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z"})
            parent = entry_id
    return entries


hostile = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=6,
)
"""Any JSON value (what a hand edit may put anywhere)."""

PLACES = [
    ("message",), ("message", "role"), ("message", "content"), ("message", "content", 0),
    ("message", "content", 0, "text"), ("message", "content", 0, "type"), ("message", "content", 1),
    ("message", "content", 1, "data"), ("message", "content", 0, "thinking"), ("message", "content", 2, "arguments"),
    ("message", "content", 2, "id"), ("message", "content", 2, "name"), ("message", "toolCallId"),
    ("message", "usage"), ("message", "usage", "input"), ("message", "usage", "cost"),
    ("message", "usage", "cost", "total"), ("message", "stopReason"), ("message", "timestamp"),
    ("usage",), ("usage", "output"), ("summary",), ("content",), ("parentId",), ("type",), ("timestamp",),
]  # fmt: skip
"""Where in an entry a hostile value goes (a place the entry does not have is skipped)."""


def _put(entry: dict[str, Any], place: tuple[Any, ...], value: Any) -> None:
    target: Any = entry
    for key in place[:-1]:
        if not _has(target, key):
            return
        target = target[key]
    if (isinstance(target, dict) and isinstance(place[-1], str)) or _has(target, place[-1]):
        target[place[-1]] = value


def _has(target: Any, key: Any) -> bool:
    if isinstance(target, dict):
        return key in target
    return isinstance(target, list) and isinstance(key, int) and key < len(target)


@st.composite
def damaged(draw: st.DrawFn) -> list[dict[str, Any]]:
    entries = copy.deepcopy(session_entries(draw(st.integers(1, 3))))
    for _ in range(draw(st.integers(1, 6))):
        entry = entries[draw(st.integers(0, len(entries) - 1))]
        _put(entry, draw(st.sampled_from(PLACES)), draw(hostile))
    return entries


def read_everything(session: Session) -> None:
    """What the host does with a loaded session: every read and every provider's conversion."""
    session.view(Totals)
    session.stats()
    session.fork_messages()
    session.tree()
    branch_message_count(session)
    context = build_session_context(session.branch())
    context_estimate(context.messages)
    for message in context.messages:
        message_text(message)
    llm = convert_to_llm(context.messages, repair_trailing=True)
    anthropic.convert_messages(llm, MODEL, None)
    chat = {**MODEL, "api": "openai-completions"}
    openai_completions.convert_messages({"messages": llm}, chat, openai_completions.resolve_compat(chat))
    openai_responses.convert_input({"messages": llm}, {**MODEL, "api": "openai-responses"})
    google.convert_contents(llm, {**MODEL, "api": "google-generative-ai"})
    transform_messages(llm, MODEL)
    state = ListingState()
    for entry in session.entries:
        state.apply(entry)
    state.info(session.header, "p")
    render_html(session.header, session.entries, session.leaf_id)


@settings(max_examples=300)
@given(entries=damaged())
def test_any_ill_typed_entry_is_repaired_and_every_read_answers(entries: list[dict[str, Any]]) -> None:
    before = copy.deepcopy(entries)
    session = Session(HEADER, entries)
    assert entries == before  # the caller's entries (the store's copy) are never changed
    assert len(session.entries) == len(entries)  # repaired, not dropped: the tree keeps every entry
    assert [e["id"] for e in session.entries] == [e["id"] for e in entries]
    again, problems = repair_entries(session.entries)
    assert again is session.entries and problems == []  # a fixpoint
    read_everything(session)


def test_a_well_formed_session_comes_out_as_it_went_in() -> None:
    entries = session_entries(3)
    repaired, problems = repair_entries(entries)
    assert repaired is entries and problems == []
    read_everything(Session(HEADER, entries))


@pytest.mark.parametrize(
    ("place", "value", "expected", "problem"),
    [
        (("message", "content"), "hi", [{"type": "text", "text": "hi"}], "content is a string (made a text block)"),
        (("message", "content", 1, "text"), 5, "5", "text block: text is a number (made text)"),
        (("message",), "oops", None, "the message is not an object (left out of the context)"),
        (("message", "role"), 5, None, "without a string role (kept aside as a custom entry 'atomic.unreadable')"),
        (("message", "usage"), "lots", None, "usage is a string (dropped)"),
    ],
)  # fmt: skip
def test_the_issue_s_cases_are_repaired_as_documented(
    place: tuple[Any, ...], value: Any, expected: Any, problem: str
) -> None:
    entries = session_entries(1)
    _put(entries[1], place, value)
    session = Session(HEADER, entries)
    assert len(session.repairs) == 1 and problem in session.repairs[0], session.repairs
    repaired = session.entries[1]
    if place == ("message", "content"):
        assert repaired["message"]["content"] == expected
    elif place[-1] == "text":
        assert repaired["message"]["content"][1]["text"] == expected
    elif place == ("message",):
        assert repaired == entries[1] and session.odd_message_positions() == [1]
    elif place == ("message", "role"):
        assert repaired["type"] == "custom" and repaired["customType"] == "atomic.unreadable"
        assert repaired["data"] == entries[1] and repaired["parentId"] == entries[0]["id"]
        assert session.branch()[-1]["id"] == entries[-1]["id"] and len(session.branch()) == len(entries)
    else:
        assert "usage" not in repaired["message"]
    read_everything(session)


ROOTS = tuple(str(Path(sys.modules[m].__file__ or "").resolve().parent) for m in ("atomic_host", "builtin_plugins"))


def _lines(fn: Any) -> int:
    """Lines of host code ``fn()`` executes (``sys.settrace``), as tests/session_scale counts them."""
    count = 0

    def local(frame: Any, event: str, _arg: Any) -> Any:
        nonlocal count
        count += event == "line"
        return local

    def tracer(frame: Any, _event: str, _arg: Any) -> Any:
        return local if frame.f_code.co_filename.startswith(ROOTS) else None

    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(None)
    return count


@pytest.mark.parametrize("broken", [False, True], ids=["well-formed", "every-turn-broken"])
def test_the_repair_costs_linear_work_at_x10_and_x100(broken: bool) -> None:
    work = []
    for turns in (5, 50, 500):
        entries = session_entries(turns)
        if broken:
            for entry in entries[1::7]:  # each turn's assistant reply: content a string, usage text
                _put(entry, ("message", "content"), "text")
                _put(entry, ("message", "usage"), "lots")
        work.append(_lines(lambda entries=entries: repair_entries(entries)))
    assert work[1] <= 12 * work[0] and work[2] <= 12 * work[1], work
