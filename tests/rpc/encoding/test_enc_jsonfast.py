"""The protocol encoder's two engines and the tree encoder give the same JSON values as the
standard library for any input (hypothesis), never emit a raw U+2028/U+2029/U+0085, and handle
what orjson refuses (deep nesting, huge ints, non-string keys, lone surrogates)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atomic_host.client import loads_deep
from atomic_host.core import jsonfast
from atomic_host.kit.sessions.store import MemoryStore
from atomic_host.session.tree import tree_json

text = st.text(alphabet=st.characters(), max_size=30)  # surrogates included
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=25,
)


def _canonical(value: Any) -> str:
    """One fixed text per JSON value, at any depth (the standard library's encoding, iteratively)."""
    return jsonfast._dumps_deep(value)


def _no_raw_breaks(line: str) -> None:
    assert "\u2028" not in line and "\u2029" not in line and "\x85" not in line and "\n" not in line


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=values)
def test_dumps_gives_the_standard_librarys_value(engine: str, value: Any) -> None:
    line = jsonfast.dumps(value)
    _no_raw_breaks(line)
    assert json.loads(line) == json.loads(json.dumps(value))


@pytest.mark.parametrize("depth", [10, 254, 255, 300, 5000])
def test_deep_values_encode_whatever_the_engine(engine: str, depth: int) -> None:
    value: Any = "leaf\u2028"
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    line = jsonfast.dumps(value)
    _no_raw_breaks(line)
    assert _canonical(loads_deep(line)) == _canonical(value)  # == itself would recurse


def test_what_orjson_refuses_falls_back(engine: str) -> None:
    for value in ({"n": 2**70}, {1: "int key"}, {"s": "\ud800 lone"}):
        line = jsonfast.dumps(value)
        assert json.loads(line) == json.loads(json.dumps(value))


entry_text = st.text(max_size=20)


@st.composite
def sessions(draw: st.DrawFn) -> Any:
    """A session with branches (random parents), labels, and sometimes a long linear spine."""
    store = MemoryStore()
    session = store.new_session("/p")
    ids: list[str] = []
    for _ in range(draw(st.integers(0, 25))):
        if ids and draw(st.booleans()):
            session.leaf_id = draw(st.sampled_from(ids))
        entry = session.append_message({"role": "user", "content": draw(entry_text), "timestamp": 1})
        ids.append(entry["id"])
    for _ in range(draw(st.integers(0, 3))):
        if ids:
            session.append_label(draw(st.sampled_from(ids)), draw(entry_text))
    if draw(st.booleans()):
        for i in range(draw(st.integers(300, 1500))):
            session.append_message({"role": "user", "content": f"spine {i} \u2028", "timestamp": 1})
    return session


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(session=sessions())
def test_tree_json_is_the_tree_encoded(engine: str, session: Any) -> None:
    line = tree_json(session).data.decode()
    _no_raw_breaks(line)
    assert _canonical(loads_deep(line)) == _canonical(session.tree())


def test_loads_deep_parses_a_100k_deep_line_without_crashing_the_client() -> None:
    """The get_tree of a 20,000-turn session is ~40,000 levels deep: on the main thread's stack the
    C scanner crashed the client process (SIGSEGV). In a subprocess, so a crash fails this test."""
    code = (
        "from atomic_host.client import loads_deep\n"
        "n = 100_000\n"
        "v = loads_deep('{\"c\":[' * n + '{}' + ']}' * n)\n"
        "depth = 0\n"
        "while v.get('c'):\n"
        "    v, depth = v['c'][0], depth + 1\n"
        "print(depth)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "100000"


def test_loads_deep_reports_invalid_json_from_its_thread() -> None:
    with pytest.raises(json.JSONDecodeError):
        loads_deep("[" * 5000 + "x")
