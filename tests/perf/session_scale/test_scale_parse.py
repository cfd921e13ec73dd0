"""Opening parses a session file a line at a time with jiter, and with json.loads what jiter refuses:
for any file, whole, torn, with blank, junk or two-value lines, the result is json.loads' line by line."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from atomic_host.kit.sessions.jsonl import parse_line, parse_records

LINES = st.sampled_from(
    [b'{"a":1}', b'{"b":[1,2]}', b"null", b"1,2", b'{"x":1},{"y":2}', b"", b" ", b'{"t', b"}", b"{",
     b"[1]", b'"s"', b"\r", b'{"u":"\\u2028 \xe2\x80\xa8"}', b"{}", b'{"n":1e400}', b"\xff",
     b'{"s":"x', b'y"}', b'{"a":[1', b"2]}", b"{\x00}\x00"]  # values and strings across lines, UTF-16
)


def line_by_line(data: bytes) -> list[dict]:
    records = []
    for line in data.split(b"\n"):
        if line.strip():
            obj = parse_line(line)
            if isinstance(obj, dict):
                records.append(obj)
    return records


@settings(max_examples=2000)
@given(lines=st.lists(LINES | st.binary(max_size=12), max_size=10), newline_ended=st.booleans())
# a CI run found it: a line of two values and a value over two lines made one item per line for the
# parse of all lines joined into an array (the old fast path), which returned three records no line holds
@example(lines=[b'{"x":1},{"y":2}', b'{"a":[1', b"2]}"], newline_ended=False)
@example(lines=[b'{"a":[{"b":1}', b'{"c":2}]}', b'{"x":1},{"y":2}'], newline_ended=True)
def test_the_parse_is_the_line_by_line_parse(lines: list[bytes], newline_ended: bool) -> None:
    data = b"\n".join(lines) + (b"\n" if newline_ended and lines else b"")
    assert parse_records(data) == line_by_line(data)
