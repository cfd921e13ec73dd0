"""Strict JSON in both directions, in process: the protocol encoder writes a NaN or infinite float
as ``null`` with either engine (never ``NaN``/``Infinity``, which ``JSON.parse``, serde and Go
reject), at any depth and next to strings that contain those words, and its cost stays linear;
the command parser refuses the non-JSON constants."""

from __future__ import annotations

import json
import math
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atomic_host.client import loads_deep
from atomic_host.core import jsonfast

words = st.sampled_from(["NaN", "Infinity", "-Infinity", '"NaN"', "\\", '\\"', "x"])
text = st.lists(words | st.text(max_size=5), max_size=5).map("".join)
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | text,  # NaN and ±inf included
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=25,
)


def _finite(value: Any) -> Any:
    """What strict JSON carries for ``value``: each NaN or infinite float becomes None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    return value


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=values)
def test_non_finite_floats_are_written_null_by_both_engines(engine: str, value: Any) -> None:
    line = jsonfast.dumps(value)
    assert jsonfast.loads_strict(line) == _finite(value)  # strict: NaN/Infinity would raise
    assert jsonfast.dumpb(value) == line.encode()


@pytest.mark.parametrize("depth", [300, 5000])
def test_a_deep_nan_is_null_too(engine: str, depth: int) -> None:
    value: Any = {"n": float("nan"), "s": "NaN Infinity"}
    for i in range(depth):
        value = [value, float("-inf")] if i % 2 else {"k": value}
    line = jsonfast.dumps(value)
    assert "NaN," not in line and "Infinity]" not in line
    decoded = loads_deep(line)
    for _ in range(depth):
        decoded = decoded[0] if isinstance(decoded, list) else decoded["k"]
    assert decoded == {"n": None, "s": "NaN Infinity"}


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_the_parser_refuses_the_non_json_constants(constant: str) -> None:
    with pytest.raises(ValueError, match=f"{constant} is not JSON"):
        jsonfast.loads_strict(f'{{"type":"get_state","id":[1,{{"x":{constant}}}]}}')
    assert jsonfast.loads_strict('{"s":"NaN Infinity"}') == {"s": "NaN Infinity"}
    assert jsonfast.loads_strict('{"n":1e400}')["n"] == math.inf  # valid JSON: as JavaScript reads it


def test_the_null_rewrite_costs_linear_time() -> None:
    """A record with a NaN and a long string full of escapes (the rewrite's worst case): x10 and
    x100 the size cost at most ~x10 and ~x100 the CPU time (with slack), not the square."""
    saved, jsonfast._fast = jsonfast._fast, None
    try:

        def cost(n: int) -> float:
            record = {"n": float("nan"), "s": 'a"\\b NaN ' * n, "list": [float("inf")] * (n // 10)}
            start = time.process_time()
            for _ in range(3):
                line = jsonfast.dumps(record)
            assert json.loads(line)["n"] is None
            return time.process_time() - start

        base = max(cost(2_000), 1e-3)
        assert cost(20_000) < 30 * base
        assert cost(200_000) < 300 * base
    finally:
        jsonfast._fast = saved
