"""Frontmatter is YAML (lists and nested maps keep their structure), with the lenient parser as the
fallback for headers that are not YAML; hostile headers never raise."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from builtin_plugins.frontmatter import parse_yaml_subset, split_frontmatter


def test_lists_and_nested_maps_keep_their_structure() -> None:
    meta, body = split_frontmatter(
        "---\nname: review\nallowed-tools: [read, search]\ntags:\n  - code\n  - review\n"
        "model:\n  provider: anthropic\n  id: claude-sonnet-4-5\nupdated: 2026-01-02\noff: no\n1: one\n---\nBody\n"
    )
    assert meta == {
        "name": "review",
        "allowed-tools": ["read", "search"],
        "tags": ["code", "review"],
        "model": {"provider": "anthropic", "id": "claude-sonnet-4-5"},
        "updated": "2026-01-02",
        "off": False,
        "1": "one",
    }
    assert body == "Body\n"


def test_a_header_that_is_not_yaml_falls_back_to_the_lenient_parser() -> None:
    header = "description: Review: the diff, then: the tests\nname: x\n"
    meta, _ = split_frontmatter(f"---\n{header}---\n")
    assert meta == parse_yaml_subset(header)
    assert meta == {"description": "Review: the diff, then: the tests", "name": "x"}


def test_a_header_that_is_yaml_but_not_a_mapping_falls_back() -> None:
    meta, _ = split_frontmatter("---\n- just\n- a list\n---\nbody")
    assert meta == {}


@given(header=st.text(max_size=300))
def test_any_header_gives_a_dict_of_text_keys(header: str) -> None:
    meta, _ = split_frontmatter(f"---\n{header.replace('---', '- -')}\n---\nbody")
    assert isinstance(meta, dict) and all(isinstance(k, str) for k in meta)


def test_deep_and_aliased_yaml_is_refused_or_bounded() -> None:
    bomb = "---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n" \
           "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n---\n"  # fmt: skip
    meta, _ = split_frontmatter(bomb)
    assert len(meta["c"]) == 9  # aliases are references: nothing explodes in memory
    deep = "---\nk: " + "[" * 5000 + "]" * 5000 + "\n---\n"
    meta, _ = split_frontmatter(deep)  # too deep for the parser: the lenient one keeps the text
    assert isinstance(meta, dict)
