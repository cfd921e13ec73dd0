"""Template arguments: the same split as the first, character-by-character version, for any text,
with work that grows linearly in its size, also under a profile function (the old version grew each
word with ``+=``, which copies the word so far whenever a profiler, debugger or coverage runs)."""

from __future__ import annotations

import sys
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from builtin_plugins.prompts import split_args


def reference_split(text: str) -> list[str]:
    """``split_args`` as it was first written: one character at a time."""
    args: list[str] = []
    current = ""
    quote: str | None = None
    for ch in text:
        if quote is not None:
            if ch == quote:
                quote = None
            else:
                current += ch
        elif ch in ("'", '"'):
            quote = ch
        elif ch in (" ", "\t", "\n"):
            if current:
                args.append(current)
                current = ""
        else:
            current += ch
    if current:
        args.append(current)
    return args


@settings(max_examples=1000)
@given(text=st.text(alphabet=st.sampled_from(list("ab '\"\t\n\r\u00a0é")), max_size=40) | st.text())
def test_the_split_equals_the_reference(text: str) -> None:
    assert split_args(text) == reference_split(text)


def _seconds(size: int) -> float:
    text = '"' + "x" * size + '" ' + "w " * (size // 2)
    t0 = time.process_time()
    args = split_args(text)
    seconds = time.process_time() - t0
    assert len(args) == 1 + size // 2 and len(args[0]) == size
    return seconds


def test_a_pasted_megabyte_splits_in_linear_time_under_a_profiler() -> None:
    """10 KB and ×100 with a profile function set: one quoted 1 MB word took 11 s (the word so far
    copied per character); now a few milliseconds."""
    sys.setprofile(lambda *_: None)
    try:
        small = max(_seconds(10_000), 0.002)
        big = _seconds(1_000_000)
    finally:
        sys.setprofile(None)
    assert big < 2, f"1 MB took {big:.2f} s"
    assert big < 300 * small, (small, big)
