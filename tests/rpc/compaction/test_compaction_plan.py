"""The planned rung's answer handling: overflow views, length recovery, failures, the fresh rung."""

from __future__ import annotations

from typing import Any

import pytest

from builtin_plugins.compaction.plan import PlanFailed, fresh, plan
from builtin_plugins.compaction.prepare import Preparation


def prep(n: int, protected: set[int] | None = None) -> Preparation:
    return Preparation(lines=[f"line {i}" for i in range(1, n + 1)], protected=protected or set(),
                       first_kept_entry_id=None)


def answer(text: str = "", stop: str = "stop", **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "stopReason": stop, **extra}


class Script:
    """Replies in order; records the transcript line count each request showed."""

    def __init__(self, *replies: dict[str, Any]) -> None:
        self.replies = list(replies)
        self.views: list[int] = []

    async def __call__(self, context: dict[str, Any]) -> dict[str, Any]:
        text = context["messages"][0]["content"][0]["text"]
        self.views.append(int(text.split("Total lines: ")[1].split("\n")[0]))
        return self.replies.pop(0)


async def test_ranked_and_recovered() -> None:
    result = await plan(prep(40), 0.5, "q", 128000, Script(answer("3,4\n1,2\n")))
    assert (result.ranges, result.outcome) == ([(1, 4)], "ranked")
    result = await plan(prep(40), 0.5, "q", 128000, Script(answer("3,4\n10,1", stop="length")))
    assert (result.ranges, result.outcome) == ([(3, 4)], "recovered")


async def test_overflow_withholds_the_head_and_rebases() -> None:
    too_long = answer(stop="error", errorMessage="prompt is too long: 300000 tokens > 200000 maximum")
    over_usage = answer("1,2", usage={"input": 200000, "output": 5})
    script = Script(too_long, over_usage, answer("1,2"))
    result = await plan(prep(40, protected={3}), 0.5, "q", 128000, script)
    assert script.views == [40, 20, 10]
    # lines 1..30 withheld (deleted, except protected 3), then the answer's 1,2 → 31,32
    assert result.ranges == [(1, 2), (4, 32)]


async def test_overflow_until_no_smaller_view() -> None:
    too_long = answer(stop="error", errorMessage="context_length_exceeded")
    with pytest.raises(PlanFailed) as err:
        await plan(prep(20), 0.5, "q", 128000, Script(*[too_long] * 10))
    assert err.value.outcome == "overflowed"


@pytest.mark.parametrize(
    ("reply", "outcome"),
    [
        (answer("delete 1 to 5"), "unusable"),
        (answer(""), "unusable"),
        (answer("50,60"), "unusable"),  # nothing left after clamping
        (answer(stop="error", errorMessage="429 rate limit"), "rateLimited"),
        (answer(stop="error", errorMessage="401 invalid api key"), "providerError"),
    ],
)
async def test_failures(reply: dict[str, Any], outcome: str) -> None:
    with pytest.raises(PlanFailed) as err:
        await plan(prep(40), 0.5, "q", 128000, Script(reply))
    assert err.value.outcome == outcome


def test_fresh_rung_keeps_protected_lines() -> None:
    p = prep(25, protected={10, 11})
    rec = fresh(p)
    assert rec.text == "(filtered 9 lines)\nline 10\nline 11\n(filtered 14 lines)"
    assert fresh(prep(0)).text == ""
