"""``json_body`` with frozen members (kit/_fast/http1.py) is the JSON httpx sends, whatever the
rest of the body holds: also several frozen members, and bodies whose own strings or keys are
(or hold) the stand-in text the splice uses."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from atomic_host.kit._fast.http1 import _SLOT, freeze_json, json_body

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
STAND_INS = st.sampled_from(
    [_SLOT.format(i) for i in range(3)] + ['"' + _SLOT.format(0), _SLOT.format(1) + "x", "\\" + _SLOT.format(0)]
)
TEXT = st.one_of(st.text(max_size=5), STAND_INS)


def _httpx(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


@settings(max_examples=400, deadline=None)
@given(
    members=st.lists(st.tuples(TEXT, st.one_of(JSON, TEXT, st.lists(TEXT, max_size=2))), max_size=5),
    frozen=st.lists(st.tuples(TEXT, JSON, st.integers(0, 5)), max_size=3),
)
def test_frozen_members_splice_to_the_json_httpx_sends(
    members: list[tuple[str, Any]], frozen: list[tuple[str, Any, int]]
) -> None:
    body = dict(members)
    items = list(body.items())
    for key, value, at in frozen:
        items.insert(min(at, len(items)), (key, freeze_json([value, key])))
    body = dict(items)
    assert json_body(body) == _httpx(body)


def test_a_body_holding_the_stand_in_text_is_still_the_json_httpx_sends() -> None:
    tools = freeze_json([{"name": "read"}])
    for body in (
        {"messages": [_SLOT.format(0)], "tools": tools},
        {"tools": tools, "messages": [_SLOT.format(0)]},
        {_SLOT.format(0): 1, "tools": tools},
        {"messages": ['"' + _SLOT.format(0)], "tools": tools, "more": freeze_json({"a": _SLOT.format(1)})},
        {1: "int key", "tools": tools},
    ):
        assert json_body(body) == _httpx(body)
