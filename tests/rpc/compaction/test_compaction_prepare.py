"""§4.2 preparation: kept tail, serialization, prior summary, protected spans."""

from __future__ import annotations

from typing import Any

import pytest

from builtin_plugins.compaction.prepare import prepare, protected_lines, ranges_text


def msg(entry_id: str, message: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
            "message": message}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0}


def assistant(text: str, *calls: dict[str, Any]) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "toolCall", **c} for c in calls]
    return {"role": "assistant", "content": content, "stopReason": "toolUse" if calls else "stop",
            "provider": "faux", "model": "faux-1", "api": "faux", "timestamp": 0}


def result(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": call_id, "toolName": "bash",
            "content": [{"type": "text", "text": text}], "isError": False, "timestamp": 0}


BRANCH = [
    {"type": "model_change", "id": "m0", "parentId": None, "provider": "faux", "modelId": "faux-1"},
    msg("u1", user("first\nquestion")),
    msg("a1", assistant("", {"id": "c1", "name": "bash", "arguments": {"command": "ls"}})),
    msg("r1", result("c1", "a.txt\nb.txt")),
    msg("a2", assistant("done")),
    msg("u2", user("second")),
    msg("a3", assistant("ok")),
]


def test_tail_counts_messages_not_turns() -> None:
    prep = prepare(BRANCH, preserve_recent=3, tokens_before=7)
    assert prep.first_kept_entry_id == "a2"
    assert [m["role"] for m in prep.tail_messages] == ["assistant", "user", "assistant"]
    assert prep.text == '[User]: first\nquestion\n\n[Assistant tool calls]: bash(command="ls")\n\n' \
        "[Tool result]: a.txt\nb.txt"
    assert prep.tokens_before == 7
    assert prep.last_user_text == "second"


def test_tail_may_begin_with_a_tool_result() -> None:
    assert prepare(BRANCH, preserve_recent=4).first_kept_entry_id == "r1"


def test_zero_keeps_nothing() -> None:
    prep = prepare(BRANCH, preserve_recent=0)
    assert prep.first_kept_entry_id is None
    assert prep.tail_messages == []
    assert prep.lines[-1] == "[Assistant]: ok"


def test_small_region_is_not_compactable() -> None:
    assert not prepare(BRANCH, preserve_recent=2).compactable
    big = [*BRANCH, msg("u3", user("\n".join(f"l{i}" for i in range(30))))]
    assert prepare(big, preserve_recent=0).compactable


def test_region_starts_at_boundary_kept_entry_and_prepends_summary() -> None:
    boundary = {"type": "compaction", "id": "k1", "parentId": "a3", "summary": "[User]: old\n(filtered 9 lines)",
                "firstKeptEntryId": "u2", "tokensBefore": 5, "details": {"strategy": "verbatim-lines"}}
    branch = [*BRANCH, boundary, msg("u3", user("third")), msg("a4", assistant("fine"))]
    prep = prepare(branch, preserve_recent=1)
    assert prep.first_kept_entry_id == "a4"
    assert prep.lines == [
        "[User]: old", "(filtered 9 lines)", "[User]: second", "", "[Assistant]: ok", "", "[User]: third",
    ]


def test_boundary_without_kept_entry_starts_after_it() -> None:
    boundary = {"type": "compaction", "id": "k1", "parentId": "a3", "summary": "S",
                "firstKeptEntryId": None, "tokensBefore": 5, "details": {"strategy": "verbatim-lines"}}
    prep = prepare([*BRANCH, boundary, msg("u3", user("third"))], preserve_recent=0)
    assert prep.lines == ["S", "[User]: third"]


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["[User]: <keepContext>", "a", "</keepContext>", "b"], {1, 2, 3}),
        (["[User]: x", "  <KEEPCONTEXT>  ", "a", "</keepcontext>", "b"], {2, 3, 4}),  # case, trim
        (["[User]: x <keepContext>", "a"], set()),  # tag must be the whole line
        (["[User]: <keepContext>", "a", "", "[Assistant]: b"], {1, 2, 3}),  # a role header closes it
        (["[User]: <keepContext>", "a", "<keepContext>", "b", "</keepContext>", "c", "</keepContext>"],
         {1, 2, 3, 4, 5}),  # nested openers flatten; the later closer is stray
        (["[User]: </keepContext>", "a"], set()),  # stray closer ignored
        (["[Tool result]: <keepContext>", "a", "</keepContext>"], set()),  # never inside tool results
        (["<keepContext>", "prior", "</keepContext>", "[User]: x"], {1, 2, 3}),  # prior summary may protect
        (["[Assistant]: <keepContext>", "a"], {1, 2}),  # unclosed: to the end of its message
    ],
)
def test_protected_lines(lines: list[str], expected: set[int]) -> None:
    assert protected_lines(lines) == expected


def test_ranges_text() -> None:
    assert ranges_text({1, 2, 3, 7, 9, 10}) == "1-3, 7-7, 9-10"
    assert ranges_text(set()) == "none"
