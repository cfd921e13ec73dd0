"""The partial-JSON repair and the tool-call stream: the same answers as the reference, for any text
and any split, with work that grows linearly in the size of what streams."""

from __future__ import annotations

import itertools
import json
import time

from hypothesis import given, settings
from hypothesis import strategies as st
from scost_helpers import reference_parse, reference_repair, write_arguments

from atomic_host.kit.llm import json_parse, stream
from atomic_host.kit.llm.json_parse import parse_streaming_json, repair_json_strings
from atomic_host.kit.llm.stream import AssistantStream

# Text made mostly of what the repair cares about: quotes, backslashes, escape letters, controls.
tricky = st.text(alphabet=st.sampled_from('"\\/bfnrtux0{}[]:,\n\r\t\x00\x1f\x7fé✓\u2028 '), max_size=200)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=400)
@given(text=tricky | st.text())
def test_repair_equals_the_reference_for_any_text(text: str) -> None:
    assert repair_json_strings(text) == reference_repair(text)


@settings(max_examples=600)
@given(text=tricky | st.text(), cut=st.integers(0, 10**6))
def test_parse_equals_the_reference_for_any_text(text: str, cut: int) -> None:
    """The partial parse first, the repair only for what it refuses: the same dict as the repair
    first, for hostile text and for prefixes of JSON with raw controls and invalid escapes."""
    assert parse_streaming_json(text) == reference_parse(text)
    broken = '{"k\\q": "a\tb\\x", "n": [1, {"s": "' + text + '"}]}'
    prefix = broken[: cut % (len(broken) + 1)]
    assert parse_streaming_json(prefix) == reference_parse(prefix)


@given(value=st.dictionaries(st.text(max_size=10), json_values, max_size=5), cut=st.integers(0, 10**6))
def test_parse_equals_the_reference_for_prefixes_of_json(value: dict, cut: int) -> None:
    text = json.dumps(value, ensure_ascii=bool(cut % 2))
    prefix = text[: cut % (len(text) + 1)]
    assert parse_streaming_json(prefix) == reference_parse(prefix)


def test_a_streamed_megabyte_is_parsed_without_the_repair() -> None:
    """A valid argument cut short is answered by the partial parse: the repair (a Python callback
    per escape) never runs while a big ``write`` call streams."""
    _, arguments = write_arguments(1_000_000)
    calls = 0
    real = json_parse.repair_json_strings

    def counting(text: str) -> str:
        nonlocal calls
        calls += 1
        return real(text)

    json_parse.repair_json_strings = counting
    try:
        s = AssistantStream({"id": "m", "provider": "p", "api": "a"})
        index, _ = s.toolcall_start("c", "write")
        for i in range(0, len(arguments), 40):
            s.toolcall_delta(index, arguments[i : i + 40])
        assert s.toolcall_end(index)["toolCall"]["arguments"] == json.loads(arguments)
    finally:
        json_parse.repair_json_strings = real
    assert calls == 0


@settings(max_examples=200)
@given(value=st.dictionaries(st.text(max_size=10), json_values, max_size=5), cuts=st.lists(st.integers(0, 10**6)))
def test_any_split_of_the_arguments_ends_with_the_arguments(value: dict, cuts: list[int]) -> None:
    """Fragment boundaries anywhere (inside escapes, inside multi-byte characters' escapes, inside
    numbers): every partial view parses to a dict, and the end gives back exactly what was sent."""
    text = json.dumps(value, ensure_ascii=bool(cuts and cuts[0] % 2))
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    s = AssistantStream({"id": "m", "provider": "p", "api": "a"})
    index, _ = s.toolcall_start("c", "write")
    for a, b in itertools.pairwise(points):
        event = s.toolcall_delta(index, text[a:b])
        assert event["delta"] == text[a:b]
        assert isinstance(s.content[index]["arguments"], dict)
    assert s.toolcall_buffer(index) == text
    end = s.toolcall_end(index)
    assert end["toolCall"]["arguments"] == value


@given(prefix_len=st.integers(0, 400))
def test_a_partial_view_is_what_the_prefix_says(prefix_len: int) -> None:
    body, arguments = write_arguments(300)
    view = parse_streaming_json(arguments[:prefix_len])
    assert isinstance(view, dict)
    if "content" in view:
        assert body.startswith(view["content"])


def _stream_write(size: int, fragment: int = 40) -> tuple[float, int]:
    """Stream a ``write`` call of ``size`` characters; (seconds, characters parsed in all)."""
    parsed = 0
    real = stream.parse_streaming_json

    def counting(text: str) -> object:
        nonlocal parsed
        parsed += len(text)
        return real(text)

    body, arguments = write_arguments(size)
    stream.parse_streaming_json = counting
    try:
        s = AssistantStream({"id": "m", "provider": "p", "api": "a"})
        index, _ = s.toolcall_start("c", "write")
        # CPU time of this process, not wall time: other work on a loaded machine does not inflate it
        t0 = time.process_time()
        for i in range(0, len(arguments), fragment):
            s.toolcall_delta(index, arguments[i : i + fragment])
        end = s.toolcall_end(index)
        seconds = time.process_time() - t0
    finally:
        stream.parse_streaming_json = real
    assert end["toolCall"]["arguments"]["content"] == body
    return seconds, parsed


def test_parsing_work_is_linear_in_the_argument_size() -> None:
    """Characters handed to the partial parser stay within a constant factor of the argument size
    at 10 KB, ×10 and ×100 (it was the sum of all prefixes: quadratic)."""
    for size in (10_000, 100_000, 1_000_000):
        _, parsed = _stream_write(size)
        assert parsed <= 4 * size + 1000, (size, parsed)


def test_a_megabyte_tool_call_streams_in_well_under_a_second() -> None:
    small, _ = _stream_write(100_000)
    big, _ = _stream_write(1_000_000)
    assert big < 5, f"1 MB took {big:.2f} s"  # ~0.3 s here; quadratic parsing took minutes
    assert big < 30 * max(small, 0.005), (small, big)  # ×10 the input: about ×10 the time, not ×100


def test_repair_of_a_megabyte_is_one_fast_pass() -> None:
    _, arguments = write_arguments(1_000_000)
    t0 = time.perf_counter()
    repaired = json_parse.repair_json_strings(arguments[:-2])  # cut inside the string
    assert time.perf_counter() - t0 < 2  # milliseconds here; the per-character loop took seconds
    assert repaired == reference_repair(arguments[:-2])


def test_a_tool_call_streams_linearly_under_a_profiler() -> None:
    """With a profile function set (as a profiler, a debugger or coverage sets one), CPython runs the
    generic ``+=``, which copies a string instead of growing it: the argument buffer is a list of
    fragments, so 1 MB still costs about ten times 100 KB (it cost a hundred times: 0.8 s)."""
    import sys

    sys.setprofile(lambda *_: None)
    try:
        small, _ = _stream_write(100_000)
        big, _ = _stream_write(1_000_000)
    finally:
        sys.setprofile(None)
    assert big < 5, f"1 MB took {big:.2f} s"  # ~0.1 s here
    assert big < 30 * max(small, 0.005), (small, big)
