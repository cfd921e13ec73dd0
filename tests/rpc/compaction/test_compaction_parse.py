"""§4.4 parsing and validation rules, as tables."""

from __future__ import annotations

import pytest

from builtin_plugins.compaction.parse import parse_ranges, validate


@pytest.mark.parametrize(
    ("text", "stop", "expected"),
    [
        ("1,5\n9,12", "stop", [(1, 5), (9, 12)]),
        ("1,5\n9,12\n", "stop", [(1, 5), (9, 12)]),  # one trailing empty line is ignored
        ("1,5\n9,12\n\n", "stop", None),  # but only one
        ("0,0", "stop", [(0, 0)]),
        ("", "stop", None),  # empty text is malformed
        ("\n", "stop", None),
        ("01,5", "stop", None),  # leading zero
        ("+1,5", "stop", None),  # sign
        ("-1,5", "stop", None),
        ("1, 5", "stop", None),  # space
        (" 1,5", "stop", None),
        ("1,5,7", "stop", None),  # exactly one comma
        ("1-5", "stop", None),
        ("1,5\nsure, here you go", "stop", None),  # any bad line rejects the whole answer
        ("1,5\r\n2,3", "stop", None),
        ("\uff11,5", "stop", None),  # ASCII digits only
        ("1,5\n9,1", "length", [(1, 5)]),  # length: the fragment after the last newline is dropped
        ("1,5\n9,12\n", "length", [(1, 5), (9, 12)]),
        ("1,5\nxx\n9,", "length", None),  # a bad complete line is still fatal
        ("1,5\n9,", "length", [(1, 5)]),
        ("1,5", "length", None),  # nothing newline-terminated
        ("10,20\n", "length", [(10, 20)]),
    ],
)
def test_parse_ranges(text: str, stop: str, expected: list[tuple[int, int]] | None) -> None:
    assert parse_ranges(text, stop) == expected


@pytest.mark.parametrize(
    ("ranges", "total", "protected", "expected"),
    [
        ([(1, 5), (9, 12)], 20, set(), [(1, 5), (9, 12)]),
        ([(5, 1)], 20, set(), [(1, 5)]),  # reversed pairs are swapped
        ([(0, 3)], 20, set(), [(1, 3)]),  # clamped to [1, total]
        ([(18, 40)], 20, set(), [(18, 20)]),
        ([(25, 30)], 20, set(), []),  # outside: empty
        ([(0, 0)], 20, set(), []),
        ([(9, 12), (1, 5)], 20, set(), [(1, 5), (9, 12)]),  # sorted
        ([(1, 5), (3, 8)], 20, set(), [(1, 8)]),  # overlapping merge
        ([(1, 5), (6, 8)], 20, set(), [(1, 8)]),  # adjacent merge
        ([(1, 5), (7, 8)], 20, set(), [(1, 5), (7, 8)]),
        ([(1, 10)], 20, {3, 4, 8}, [(1, 2), (5, 7), (9, 10)]),  # split around protected lines
        ([(3, 4)], 20, {3, 4}, []),  # nothing left
        ([(1, 1)], 1, set(), [(1, 1)]),
    ],
)
def test_validate(
    ranges: list[tuple[int, int]], total: int, protected: set[int], expected: list[tuple[int, int]]
) -> None:
    assert validate(ranges, total, protected) == expected
