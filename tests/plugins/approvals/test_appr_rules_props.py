"""Property tests for the permission-rule parser and matcher (``builtin_plugins/approvals/rules.py``)
and the bash splitter (``shell.py``): hostile rules, commands, paths and arguments never raise
anything but the documented error, the wildcard matchers agree with a reference, an allow rule never
covers a command it does not name every part of, and the cost grows linearly (x10, x100)."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from builtin_plugins.approvals import shell
from builtin_plugins.approvals.rules import (
    Rule,
    RuleError,
    allowed,
    matches,
    parse_rule,
    path_pattern,
    prepare,
    read_paths,
    segments_match,
    star_match,
    uncovered,
)

ROOT = "/proj"
ANY = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)
HOSTILE_TEXT = st.text() | st.binary().map(lambda b: b.decode("utf-8", "surrogateescape"))


def _rule(text: str, source: str = "user") -> Rule:
    return parse_rule(text, source, ROOT)


@given(text=ANY | HOSTILE_TEXT)
def test_parse_rule_answers_with_a_rule_or_a_rule_error(text: Any) -> None:
    try:
        rule = parse_rule(text, "user", ROOT)
    except RuleError as exc:
        assert str(exc)
        return
    assert isinstance(text, str) and rule.tool == rule.tool.lower()


@given(
    name=st.sampled_from(["bash", "read", "write", "edit", "ls", "mcp__fx__echo", "todo"]),
    args=st.dictionaries(st.sampled_from(["command", "path", "content", "edits", "x"]), ANY | HOSTILE_TEXT, max_size=4),
    spec=HOSTILE_TEXT,
)
def test_hostile_arguments_and_rules_never_raise(name: str, args: dict[str, Any], spec: str) -> None:
    call = prepare(name, args, ROOT)
    for text in (f"{name}({spec})", f"Bash({spec})", f"Edit({spec})", name):
        try:
            rule = _rule(text)
        except RuleError:
            continue
        assert isinstance(matches(rule, call), bool)
        assert isinstance(allowed([rule], call), bool)


@given(path=HOSTILE_TEXT, scheme=st.sampled_from(["", "@", "file://", "@file://", "https://", "skill://", "FILE://"]))
def test_read_paths_take_any_text(path: str, scheme: str) -> None:
    """The paths a read may open: absolute, the path as given first, none for a URL or a resource."""
    found = read_paths(scheme + path, ROOT)
    assert all(isinstance(p, str) and p.startswith("/") for p in found)
    if scheme.lstrip("@") in ("https://", "skill://"):
        assert found == []
    assert len(found) <= 1 + min(len(path), 4097)


@given(rest=HOSTILE_TEXT, scheme=st.sampled_from(["http://", "HTTPS://", "@https://"]), spec=HOSTILE_TEXT)
def test_hostile_urls_and_web_rules_never_raise(rest: str, scheme: str, spec: str) -> None:
    """A read of a URL is judged by WebFetch(domain:…) and Read(<url pattern>) rules, whatever the URL."""
    call = prepare("read", {"path": scheme + rest}, ROOT)
    assert call.web and call.paths is None
    for text in (f"WebFetch(domain:{spec})", f"WebFetch({spec})", f"Read({spec})", "WebFetch", "Read(.env)"):
        try:
            rule = _rule(text)
        except RuleError:
            continue
        assert isinstance(matches(rule, call), bool) and isinstance(allowed([rule], call), bool)
    assert not matches(_rule("Read(.env)"), call) and matches(_rule("WebFetch"), call)
    assert not matches(_rule("WebFetch"), prepare("read", {"path": "./" + rest}, ROOT))  # a path, never a URL


def _reference(pattern: str, text: str) -> bool:
    return re.fullmatch(".*".join(re.escape(p) for p in pattern.split("*")), text, re.DOTALL) is not None


@given(pattern=st.text(alphabet="ab*", max_size=12), text=st.text(alphabet="ab", max_size=14))
def test_star_match_agrees_with_a_regular_expression(pattern: str, text: str) -> None:
    assert star_match(pattern, text) == _reference(pattern, text)


SEGMENT = st.sampled_from(["a", "b", "ab", "*", "a*", "**"])


def _segments_reference(pattern: list[str], segments: list[str]) -> bool:
    parts = []
    for p in pattern:
        literal = "[^/]*".join(re.escape(x) for x in p.split("*"))
        parts.append("(?:[^/]*/)*" if p == "**" else literal + "/")
    return re.fullmatch("".join(parts), "".join(s + "/" for s in segments)) is not None


@given(pattern=st.lists(SEGMENT, max_size=6), segments=st.lists(st.sampled_from(["a", "b", "ab", "ba"]), max_size=7))
def test_segments_match_agrees_with_a_regular_expression(pattern: list[str], segments: list[str]) -> None:
    assert segments_match(pattern, segments) == _segments_reference(pattern, segments)


@pytest.mark.parametrize(
    ("spec", "path", "expected"),
    [
        ("src/**", "/proj/src/a/b.py", True),
        ("src/**", "/proj/lib/a.py", False),
        ("src/", "/proj/src/x", True),
        ("*.py", "/proj/deep/er/m.py", True),
        ("*.py", "/elsewhere/m.py", False),
        (".env", "/proj/.env", True),
        ("/docs/*.md", "/proj/docs/a.md", True),
        ("/docs/*.md", "/proj/docs/sub/a.md", False),
        ("//etc/passwd", "/etc/passwd", True),
        ("../outside/*", "/outside/f", True),
    ],
)
def test_path_patterns_as_documented(spec: str, path: str, expected: bool) -> None:
    assert segments_match(path_pattern(spec, ROOT), path.split("/")) is expected


WORD = st.text(alphabet="abcxyz-._/", min_size=1, max_size=6)
SEP = st.sampled_from([" && ", " || ", "; ", " | ", " & ", "\n"])


@given(
    words=st.lists(st.lists(WORD, min_size=1, max_size=3), min_size=1, max_size=5),
    seps=st.lists(SEP, min_size=4, max_size=4),
)
def test_a_compound_command_splits_into_its_parts(words: list[list[str]], seps: list[str]) -> None:
    pieces = [" ".join(w) for w in words]
    command = pieces[0] + "".join(sep + piece for sep, piece in zip(seps, pieces[1:], strict=False))
    parsed = shell.parse(command)
    assert [p.text for p in parsed.parts] == pieces and not parsed.opaque


@given(
    allowed_words=st.lists(WORD, min_size=1, max_size=3),
    other=st.lists(WORD, min_size=1, max_size=3),
    sep=SEP,
    hide=st.sampled_from(["{}", "$({})", "`{}`", "\"$({})\"", "<({})", "{} > out"]),
)
def test_an_allow_rule_never_covers_a_part_it_does_not_name(
    allowed_words: list[str], other: list[str], sep: str, hide: str
) -> None:
    head = " ".join(allowed_words)
    rule = _rule(f"Bash({head}:*)")
    tail = " ".join(other)
    command = f"{head}{sep}{hide.format(tail)}"
    call = prepare("bash", {"command": command}, ROOT)
    covered_by_rule = hide == "{}" and (tail == head or tail.startswith(head + " "))
    assert allowed([rule], call) is covered_by_rule
    if hide != "{} > out":  # a deny rule sees the hidden part as a command of its own
        assert matches(_rule(f"Bash({tail})"), call)


@given(command=HOSTILE_TEXT)
def test_the_splitter_takes_any_text(command: str) -> None:
    parsed = shell.parse(command)
    for part in parsed.parts:
        assert part.text == part.text.strip() and part.text
    assert isinstance(uncovered([_rule("Bash(a:*)")], parsed), list)


def test_huge_and_deeply_nested_input() -> None:
    deep = "(" * 200_000 + "echo hi" + ")" * 200_000
    parsed = shell.parse(deep)
    assert [p.text for p in parsed.parts] == ["echo hi"]
    huge = "echo " + "x" * 5_000_000
    assert allowed([_rule("Bash(echo:*)")], prepare("bash", {"command": huge}, ROOT))
    path = "/".join(["d"] * 50_000)
    assert matches(_rule("Read(**/secret)"), prepare("read", {"path": path + "/secret"}, ROOT))


def _cpu(fn: Any, reps: int) -> float:
    start = time.process_time()
    for _ in range(reps):
        fn()
    return (time.process_time() - start) / reps


def _linear(cost: Any) -> None:
    small, ten, hundred = cost(1_000), cost(10_000), cost(100_000)
    assert ten < small * 10 * 4 and hundred < small * 100 * 4, (small, ten, hundred)


def test_star_match_cost_is_linear() -> None:
    pattern = "*" + "*".join(["a" * 20 + "b"] * 8) + "*c"  # pieces that almost match everywhere

    def cost(n: int) -> float:
        text = ("a" * 20 + "b") * (n // 21) + "a" * 50
        return _cpu(lambda: star_match(pattern, text), max(1, 2_000_000 // n))

    _linear(cost)


def test_path_match_cost_is_linear() -> None:
    pattern = path_pattern("**/a/**/a/**/a/**/b", ROOT)

    def cost(n: int) -> float:
        segments = ["", "proj", *(["a"] * n)]
        return _cpu(lambda: segments_match(pattern, segments), max(1, 200_000 // n))

    _linear(cost)


def test_read_path_cost_is_linear(tmp_path: Any) -> None:
    """read splits a path at every ':', '/' and '?' naming a file: the gate stats each prefix, up
    to PATH_MAX characters only."""
    (tmp_path / "a").write_text("x")
    rule = _rule("Read(secret)")

    def cost(n: int) -> float:
        path = "a:" + "b/c?d:" * (n // 6)
        return _cpu(lambda: matches(rule, prepare("read", {"path": path}, str(tmp_path))), max(1, 20_000 // n))

    _linear(cost)


def test_command_split_and_match_cost_is_linear() -> None:
    rules = [_rule("Bash(git status:*)"), _rule("Bash(echo *)"), _rule("Bash(curl *)")]

    def cost(n: int) -> float:
        piece = "echo 'a && b' \"c;d\" > /dev/null 2>&1 && git status -s | "
        command = piece * (n // len(piece) + 1)
        def work() -> None:
            uncovered(rules, shell.parse(command))
            matches(rules[2], prepare("bash", {"command": command}, ROOT))

        return _cpu(work, max(1, 200_000 // n))

    _linear(cost)
