"""kit/llm/event_json.loads: json.loads's value and error for any text, orjson's speed for the usual."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from atomic_host.kit.llm import event_json

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text()
    | st.integers(min_value=2**62, max_value=2**70) | st.integers(min_value=-(2**70), max_value=-(2**62)),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)  # fmt: skip
hostile = st.text(alphabet=st.sampled_from('{}[]",:0123456789.eE+-tfnrualsNIy \\/u\ud800\udc00\x00\t\n'), max_size=80)


def _typed(value: object) -> str:
    """A value's exact form: 1 and 1.0, 0.0 and -0.0, key order and NaN all tell apart."""
    return json.dumps(value, allow_nan=True)


def _outcome(loads, text: str) -> tuple[str, str]:
    try:
        return "value", _typed(loads(text))
    except (ValueError, RecursionError) as exc:
        return "error", f"{type(exc).__name__}: {exc}"


@settings(max_examples=500)
@given(value=values, ascii_only=st.booleans())
def test_the_value_of_json_text_is_json_loads_value(value: object, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, allow_nan=True)
    assert _outcome(event_json.loads, text) == _outcome(json.loads, text)


@settings(max_examples=500)
@given(text=hostile | st.text())
def test_any_text_gets_json_loads_value_or_error(text: str) -> None:
    assert _outcome(event_json.loads, text) == _outcome(json.loads, text)


@pytest.mark.parametrize(
    "text",
    ["[18446744073709551616]", "[-9223372036854775809]", "[1e400]", "[NaN]", "[-Infinity]", '"\\ud800"',
     '{"a":1,"a":2}', "[-0]", "[-0.0]", "\ufeff[1]", "[1]  x", "[" * 5000 + "]" * 5000],
)  # fmt: skip
def test_where_orjson_differs_the_standard_library_answers(text: str) -> None:
    assert _outcome(event_json.loads, text) == _outcome(json.loads, text)


def test_an_event_is_decoded_by_orjson() -> None:
    pytest.importorskip("orjson")
    event_json.loads("{}")
    assert event_json._fast is not json.loads
    payload = {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "ab"}}
    assert event_json.loads(json.dumps(payload)) == payload
    assert math.isinf(event_json.loads("1e400"))
