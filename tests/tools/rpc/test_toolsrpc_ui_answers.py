"""A dialog answered with a value of the wrong kind reaches the extension as cancelled: a select
value that is not one of its options, a confirm that is not a boolean, an input or editor text
that is not a string. The extension never sees a value it did not offer."""

from __future__ import annotations

from typing import Any

import pytest
from test_toolsrpc_ui import EXT, auto_answer

pytestmark = pytest.mark.slow  # every wrong answer to every dialog kind

WRONG = [
    ({"select": {"value": "purple"}}, "select", None),  # not among ["red", "green"]
    ({"select": {"value": "Red"}}, "select", None),
    ({"select": {"value": ["red"]}}, "select", None),
    ({"select": {"value": 0}}, "select", None),  # an index is not an option either
    ({"confirm": {"confirmed": "yes"}}, "confirm", False),
    ({"confirm": {"confirmed": 1}}, "confirm", False),
    ({"input": {"value": 42}}, "input", None),
    ({"editor": {"value": {"text": "x"}}}, "editor", None),
]
RIGHT = {
    "select": {"value": "green"},
    "confirm": {"confirmed": True},
    "input": {"value": "Ada"},
    "editor": {"value": "e"},
}
RIGHT_VALUES = {"select": "green", "confirm": True, "input": "Ada", "editor": "e"}


@pytest.mark.parametrize(("override", "method", "seen_by_extension"), WRONG)
async def test_a_wrong_answer_is_a_cancelled_dialog(
    rpc_host: Any, override: dict[str, Any], method: str, seen_by_extension: Any
) -> None:
    async with rpc_host("-e", EXT) as host:
        c = host.client
        answers = {**RIGHT, **override}
        auto_answer(host, lambda request: None if "timeout" in request else answers[request["method"]])
        await c.prompt_and_wait("/ui-demo", timeout=30)
        entries = (await c.get_entries())["entries"]
        (custom,) = [e for e in entries if e["type"] == "custom" and e.get("customType") == "ui-answers"]
        got = custom["data"]
        assert got[method] == seen_by_extension
        others = [k for k in RIGHT_VALUES if k != method]
        assert {k: got[k] for k in others} == {k: RIGHT_VALUES[k] for k in others}
        host.assert_protocol_lines()

