"""§4.4 reconstruction and stats; §4.1 parameters; §4.3 prompt numbers."""

from __future__ import annotations

import math

import pytest

from builtin_plugins.compaction.apply import reconstruct, stats
from builtin_plugins.compaction.params import (
    normalize_preserve_recent,
    normalize_query,
    normalize_ratio,
)
from builtin_plugins.compaction.prompt import keep_target, user_prompt


def lines(n: int) -> list[str]:
    return [f"line {i}" for i in range(1, n + 1)]


@pytest.mark.parametrize(
    ("source", "ranges", "expected_text", "deleted", "runs"),
    [
        (lines(5), [(2, 3)], "line 1\n(filtered 2 lines)\nline 4\nline 5", 2, 1),
        (lines(5), [(1, 1)], "(filtered 1 lines)\nline 2\nline 3\nline 4\nline 5", 1, 1),  # always "lines"
        (lines(5), [(1, 2), (4, 5)], "(filtered 2 lines)\nline 3\n(filtered 2 lines)", 4, 2),
        # a prior marker touching a deleted line is deleted too, and its count folds in
        (["a", "(filtered 7 lines)", "b", "c"], [(3, 3)], "a\n(filtered 8 lines)\nc", 2, 1),
        (["a", "(filtered 7 lines)", "b", "c"], [(1, 1)], "(filtered 8 lines)\nb\nc", 2, 1),
        # ... to a fixpoint: two adjacent markers chain
        (["(filtered 3 lines)", "(filtered 4 lines)", "x", "y"], [(3, 3)], "(filtered 8 lines)\ny", 3, 1),
        # an untouched prior marker stays byte-for-byte
        (["(filtered 3 lines)", "a", "b", "c"], [(3, 4)], "(filtered 3 lines)\na\n(filtered 2 lines)", 2, 1),
        (["  spaced  ", "\ttab", "x"], [(3, 3)], "  spaced  \n\ttab\n(filtered 1 lines)", 1, 1),
        (lines(3), [], "line 1\nline 2\nline 3", 0, 0),
    ],
)
def test_reconstruct(
    source: list[str], ranges: list[tuple[int, int]], expected_text: str, deleted: int, runs: int
) -> None:
    rec = reconstruct(source, ranges)
    assert (rec.text, rec.lines_deleted, rec.range_count) == (expected_text, deleted, runs)


def test_protected_marker_is_not_swallowed() -> None:
    rec = reconstruct(["a", "(filtered 2 lines)", "b"], [(1, 1)], protected={2})
    assert rec.text == "(filtered 1 lines)\n(filtered 2 lines)\nb"


def test_stats() -> None:
    rec = reconstruct(lines(40), [(1, 30)])
    s = stats(40, rec, tokens_before=1000, tail_tokens=50)
    after = math.ceil(len(rec.text) / 4) + 50
    assert s == {
        "linesBefore": 40,
        "linesDeleted": 30,
        "linesKept": 10,
        "rangeCount": 1,
        "tokensBefore": 1000,
        "tokensAfter": after,
        "percentReduction": round(100 * (1 - after / 1000), 1),
    }
    assert stats(40, rec, tokens_before=0, tail_tokens=0)["percentReduction"] == 0


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0.3, 0.3), (0, 0.5), (1, 0.5), (-0.2, 0.5), (float("nan"), 0.5), (float("inf"), 0.5), ("0.3", 0.5),
     (None, 0.5), (True, 0.5)],
)
def test_ratio(value: object, expected: float) -> None:
    assert normalize_ratio(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"), [(2, 2), (0, 0), (3.9, 3), (-4, 0), (float("nan"), 2), (None, 2), ("5", 2)]
)
def test_preserve_recent(value: object, expected: int) -> None:
    assert normalize_preserve_recent(value) == expected


def test_query() -> None:
    assert normalize_query("  focus  ", "last") == "focus"
    assert normalize_query("   ", " last user ") == "last user"
    assert normalize_query(None, None) == "the latest user request"
    long = "x" * 10_000
    assert normalize_query(None, long) == long  # never truncated


@pytest.mark.parametrize(("total", "ratio", "k"), [(20, 0.5, 10), (21, 0.5, 11), (25, 0.3, 8), (5, 0.5, 3)])
def test_keep_target_rounds_half_up(total: int, ratio: float, k: int) -> None:
    assert keep_target(total, ratio) == k


def test_keep_target_trimmed_never_below_protected() -> None:
    assert keep_target(10, 0.5, protected=8, trimmed=True) == 8
    assert keep_target(10, 0.5, protected=8, trimmed=False) == 5


def test_user_prompt_numbers_lines_and_states_targets() -> None:
    text = user_prompt(["alpha", "beta", "gamma", "delta"], {2, 3}, 0.5, "the bug")
    numbered = "1\u2192alpha\n2\u2192beta\n3\u2192gamma\n4\u2192delta"
    assert f"<numbered-transcript>\n{numbered}\n</numbered-transcript>" in text
    assert "Total lines: 4" in text
    assert "Keep target: 2 lines" in text
    assert "Delete target: 2 lines" in text
    assert "Relevance focus: the bug" in text
    assert "Protected ranges (never delete): 2-3" in text
    assert "Extra unprotected lines to keep: 0" in text
    assert "Protected ranges (never delete): none" in user_prompt(["a"], set(), 0.5, "q")
