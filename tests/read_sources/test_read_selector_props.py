"""The path-string grammar of read (sources/selector.py), with hypothesis: hostile strings never raise
anything but SelectorError, a split always puts the string back together, an existing file always
wins, and the work is linear: lookups and CPU for ×10 and ×100 the length."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from builtin_plugins.tools.sources.selector import (
    MAX_FILE_CHARS,
    Located,
    SelectorError,
    locate,
    parse_ranges,
    scheme_of,
    split_tail,
)

pieces = st.sampled_from(["a", "b.zip", "dir", ":", "/", "?q=", ":1-2", ":raw", ":md", "+", "-", ",", "9", "é", "\x00"])
hostile = st.one_of(st.text(max_size=200), st.lists(pieces, max_size=40).map("".join))


def oracle(files: set[str], dirs: set[str] = frozenset()) -> tuple[list[str], object]:
    asked: list[str] = []

    def kind_of(text: str) -> str | None:
        asked.append(text)
        return "file" if text in files else "dir" if text in dirs else None

    return asked, kind_of


@settings(max_examples=400, deadline=None)
@given(hostile, st.sets(hostile, max_size=5))
def test_hostile_strings_split_back_into_themselves(text: str, files: set[str]) -> None:
    _asked, kind_of = oracle(files)
    found = locate(text, kind_of)
    if found is None:
        assert text not in files
        return
    assert found.file in files or found.file == text or found.selector is not None or found.query is not None
    # the parts are the string cut in order: file, separator, inner, ?q=query, :selector
    rest = text[len(found.file) :]
    assert text.startswith(found.file)
    if found.inner is not None:
        assert rest[0] in ":/" and rest[1:].startswith(found.inner)
        rest = rest[1 + len(found.inner) :]
    if found.query is not None:
        assert rest == "?q=" + found.query
    elif found.selector is not None:
        assert rest == ":" + found.selector
    else:
        assert rest == ""
    if found.selector not in (None, "raw", "md"):
        try:
            ranges = found.ranges
        except SelectorError:
            return
        assert ranges and all(a >= 1 and (b is None or b >= a) for a, b in ranges)


@given(st.text(max_size=100), st.text(alphabet=":/?q=-+,0123456789abc", max_size=60))
def test_an_existing_file_always_wins(name: str, tail: str) -> None:
    text = name + tail
    if not text:
        return
    _asked, kind_of = oracle({text})
    assert locate(text, kind_of) == Located(text)


@given(st.text(alphabet="abc./-_", min_size=1, max_size=30), st.text(min_size=1, max_size=80))
def test_a_member_after_an_existing_archive(archive: str, member: str) -> None:
    archive = archive + ".zip"
    text = f"{archive}:{member}"
    _asked, kind_of = oracle({archive})
    found = locate(text, kind_of)
    assert found is not None and found.file == archive
    base, selector = split_tail(text)
    if "?q=" in text:
        assert found.query is not None
    elif selector is not None and base != archive:
        assert found.inner == base[len(archive) + 1 :] and found.selector == selector
    elif selector is not None:
        assert found.inner is None and found.selector == selector
    else:
        assert found.inner == member


@given(st.integers(0, 10**9), st.integers(0, 10**9))
def test_ranges(a: int, b: int) -> None:
    if b < a:
        try:
            parse_ranges(f"{a}-{b}")
        except SelectorError as e:
            assert "end before start" in str(e)
        else:
            raise AssertionError("reversed range accepted")
    else:
        assert parse_ranges(f"{a}-{b}") == [(max(a, 1), b)]
    assert parse_ranges(f"{a}+{b}") == [(max(a, 1), max(a, 1) + max(b, 1) - 1)]


@given(st.text(max_size=300))
def test_schemes(text: str) -> None:
    found = scheme_of(text)
    if found is not None:
        scheme, rest = found
        assert text.lower().startswith(scheme + "://") and text.endswith(rest)


def _cost(n: int) -> tuple[int, float]:
    """Lookups and CPU seconds to split a string of about ``n`` separators that names nothing."""
    text = "a:/" * n + ":1-2," * 10 + "3"
    asked, kind_of = oracle(set())
    t0 = time.process_time()
    for _ in range(5):
        locate(text, kind_of)
    return len(asked), time.process_time() - t0


def test_cost_is_linear_and_bounded() -> None:
    """×10 and ×100 the separators: lookups stop at MAX_FILE_CHARS (a file name is never longer), so
    the work levels off instead of growing with the square of the length."""
    small_n, small_t = _cost(100)
    mid_n, _ = _cost(1000)
    big_n, big_t = _cost(10_000)
    assert small_n < mid_n <= big_n
    assert big_n <= 5 * (2 * MAX_FILE_CHARS // 3 + 3)  # 5 calls: the whole, the base, each separator in 4096
    assert big_t < max(small_t, 0.001) * 300, (small_t, big_t)
    huge = "x" * 10_000_000 + ":1-2"
    t0 = time.process_time()
    assert locate(huge, oracle({"x" * 10_000_000})[1]) == Located("x" * 10_000_000, None, None, "1-2")
    assert time.process_time() - t0 < 2


@settings(max_examples=60, deadline=None)
@given(hostile)
def test_the_read_tool_answers_any_path_string_with_a_result_or_a_clear_error(tmp_path_factory, text: str) -> None:
    """In process, on a real directory holding a zip, a database and a text file: a result or a
    ToolError, never another exception."""
    import asyncio
    import sqlite3
    import zipfile

    from atomic_host.contract.tools import ToolContext, ToolError
    from builtin_plugins.tools import read as read_tool

    work = tmp_path_factory.mktemp("w")
    (work / "a").write_text("one\ntwo\n")
    with zipfile.ZipFile(work / "b.zip", "w") as zf:
        zf.writestr("dir/a", "inside\n")
    sqlite3.connect(work / "d.db").execute("CREATE TABLE t (x)").connection.commit()
    ctx = ToolContext(cwd=str(work), session_id="s", tool_call_id="c", signal=asyncio.Event())
    for candidate in (text, f"b.zip:{text}", f"a:{text}", f"d.db?q={text}", f"d.db:{text}"):
        try:
            params = read_tool.Params(path=candidate)
        except ValueError:
            continue
        try:
            result = asyncio.run(read_tool.run(params, ctx))
        except ToolError:
            continue
        assert result.content and result.content[0]["type"] == "text"
