"""A tool call's arguments run only when they are a complete JSON object at the call's end.

``AssistantStream.toolcall_end`` parses the received text whole (strings repaired as pi repairs
them); when that is not a JSON object, the block keeps the lenient parser's view for display and
the ``done`` event lists the call in ``incompleteToolCalls`` (the agent loop then refuses it).
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from atomic_host.kit.llm.json_parse import repair_json_strings
from atomic_host.kit.llm.stream import AssistantStream

MODEL = {"id": "m1", "api": "anthropic-messages", "provider": "p"}
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
OBJECTS = st.dictionaries(st.text(), JSON_VALUES, max_size=5)


def _end(fragments: list[str], call_id: str = "c1") -> tuple[dict[str, Any], dict[str, Any]]:
    """Stream one call's fragments and end the reply: (the toolCall block, the done event)."""
    out = AssistantStream(MODEL)
    index, _ = out.toolcall_start(call_id, "bash")
    for fragment in fragments:
        out.toolcall_delta(index, fragment)
    block = out.toolcall_end(index)["toolCall"]
    return block, out.done("toolUse")


def _cut(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


@settings(max_examples=200, deadline=None)
@given(OBJECTS, st.lists(st.integers(min_value=0), max_size=6))
def test_a_complete_object_runs_as_sent_however_it_is_cut(args: dict[str, Any], cuts: list[int]) -> None:
    block, done = _end(_cut(json.dumps(args, ensure_ascii=False), cuts))
    assert block["arguments"] == args
    assert "incompleteToolCalls" not in done


@settings(max_examples=200, deadline=None)
@given(OBJECTS, st.integers(min_value=1), st.lists(st.integers(min_value=0), max_size=4))
def test_any_strict_prefix_is_incomplete(args: dict[str, Any], keep: int, cuts: list[int]) -> None:
    text = json.dumps(args, ensure_ascii=False)
    prefix = text[: keep % len(text)] or "{"
    block, done = _end(_cut(prefix, cuts))
    assert done["incompleteToolCalls"] == ["c1"]
    assert isinstance(block["arguments"], dict)  # the lenient view, for display only


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_hostile_text_never_raises_and_is_complete_only_when_it_is_an_object(text: str) -> None:
    block, done = _end([text])
    assert isinstance(block["arguments"], dict)
    json.dumps(block["arguments"], allow_nan=False)  # kept in the session and sent again: strict JSON
    whole = next((v for v in map(_strict, (text, repair_json_strings(text))) if v is not None), None)
    complete = not text.strip() or isinstance(whole, dict)
    assert ("incompleteToolCalls" not in done) == complete
    if complete and text.strip():
        assert block["arguments"] == whole


def _strict(text: str) -> Any:
    """JSON as the standard says: no NaN or Infinity; a number no float holds is kept as its text."""

    def constant(name: str) -> Any:
        raise ValueError(name)

    def number(text: str) -> Any:
        return float(text) if math.isfinite(float(text)) else text

    try:
        return json.loads(text, parse_constant=constant, parse_float=number)
    except ValueError:
        return None


@settings(max_examples=200, deadline=None)
@given(OBJECTS, st.sampled_from(["1e400", "-1e999", "NaN", "Infinity", "-Infinity", "1" + "0" * 400 + ".5"]),
       st.integers(min_value=0))  # fmt: skip
def test_numbers_json_cannot_carry_never_reach_the_session(args: dict[str, Any], number: str, keep: int) -> None:
    """A number too large for a float is kept as its text (the call runs, the history stays JSON);
    NaN and Infinity are not JSON: the call is incomplete. Cut anywhere, the arguments stay JSON."""
    text = json.dumps(args)[:-1] + (", " if args else "") + f'"big": {number}}}'
    block, done = _end([text])
    json.dumps(block["arguments"], allow_nan=False)
    if number[-1].isdigit():
        assert "incompleteToolCalls" not in done and block["arguments"]["big"] in (number, float(number))
    else:
        assert done["incompleteToolCalls"] == ["c1"]
    cut, _ = _end([text[: keep % len(text)]])
    json.dumps(cut["arguments"], allow_nan=False)


def test_values_that_are_no_object_and_deep_nesting_are_incomplete() -> None:
    for text in ('"rm -rf keep_me_dir"', "[1, 2]", "null", "12", "{} {}", '{"a": 1}{"b": 2}', "[" * 100_000,
                 '{"a":' * 100_000):  # fmt: skip
        block, done = _end([text])
        assert done.get("incompleteToolCalls") == ["c1"], text[:40]
        assert isinstance(block["arguments"], dict)


def test_no_arguments_and_repaired_strings_are_complete() -> None:
    assert "incompleteToolCalls" not in _end([])[1]
    assert "incompleteToolCalls" not in _end(["  "])[1]
    block, done = _end(['{"command": "printf \'a\tb\nc\'"}'])  # raw tab and newline inside the string
    assert block["arguments"] == {"command": "printf 'a\tb\nc'"} and "incompleteToolCalls" not in done


def test_only_the_cut_call_is_listed() -> None:
    out = AssistantStream(MODEL)
    whole, _ = out.toolcall_start("a", "bash")
    out.toolcall_delta(whole, '{"command": "ls"}')
    cut, _ = out.toolcall_start("b", "bash")
    out.toolcall_delta(cut, '{"command": "rm -rf kee')
    out.end_open_blocks()
    assert out.done("toolUse")["incompleteToolCalls"] == ["b"]
    assert out.content[whole]["arguments"] == {"command": "ls"}


def _cpu_to_end(size: int) -> float:
    """CPU seconds of ending a call whose ``size``-character argument was cut mid-string."""
    text = json.dumps({"path": "a.txt", "content": "x\\n" * (size // 3)})[: size - 7]
    out = AssistantStream(MODEL)
    index, _ = out.toolcall_start("c", "write")
    out.toolcall_delta(index, text)
    t0 = time.process_time()
    out.toolcall_end(index)
    return time.process_time() - t0


def test_ending_a_cut_call_costs_linear_time() -> None:
    """10 KB, ×10, ×100: the end parses (whole, repaired, partial) stay linear in the text."""
    sizes = (10_000, 100_000, 1_000_000)
    times = [min(_cpu_to_end(size) for _ in range(3)) for size in sizes]
    assert times[2] < max(times[0], 0.002) * 100 * 4, times
    assert times[2] < 5, times
