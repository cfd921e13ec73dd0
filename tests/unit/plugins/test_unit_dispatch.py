"""plugins/dispatch.py: every combining rule, applied to real plugin files loaded by the real
PluginHost (pluggy underneath), in process."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

import pytest

from atomic_host.contract.events import (
    BeforeAgentStartEvent,
    InputEvent,
    SessionBeforeSwitchEvent,
    SystemPromptEvent,
    ToolCallEvent,
    ToolResultEvent,
    UserBashEvent,
)
from atomic_host.contract.hookspecs import DISPATCH_RULES, HookRule
from atomic_host.contract.results import AgentStartResult, BashResult, Cancel, InputResult, ToolCallDecision
from atomic_host.contract.tools import ToolResult
from atomic_host.plugins.dispatch import Dispatcher, _Fold
from atomic_host.plugins.manager import PluginHost

HEADER = "from atomic_host import *\nfrom atomic_host import hookimpl\nCALLS = []\n"


class Errors(list[tuple[str, str, str]]):
    def __call__(self, path: str, hook: str, message: str) -> None:
        self.append((path, hook, message))


@pytest.fixture
def errors() -> Errors:
    return Errors()


def _load(tmp_path: Path, errors: Errors, *bodies: str, rules: dict[str, HookRule] | None = None) -> Dispatcher:
    """Load one plugin file per body; the first body is called first (pluggy calls LIFO)."""
    host = PluginHost(errors)
    for i, body in reversed(list(enumerate(bodies))):
        path = tmp_path / f"plugin_{i}.py"
        path.write_text(HEADER + textwrap.dedent(body))
        record = host.load_file(path)
        assert record.status == "loaded", record.error
    return Dispatcher(host, api=object(), rules=rules)  # type: ignore[arg-type]


def _order(d: Dispatcher, hook: str) -> list[str]:
    return [Path(i.plugin_name).name for i in d.plugins.impls(hook)]


def test_each_collects_accepted_results_in_call_order_and_reports_the_rest(tmp_path: Path, errors: Errors) -> None:
    d = _load(
        tmp_path,
        errors,
        "@hookimpl\ndef system_prompt(event):\n    return 'one ' + ','.join(event.tools)\n",
        "@hookimpl\ndef system_prompt(event):\n    raise RuntimeError('boom')\n",
        "@hookimpl\ndef system_prompt(event):\n    return {'not': 'a string'}\n",
        "@hookimpl\ndef system_prompt(event):\n    return None\n",
        "@hookimpl\ndef system_prompt(event):\n    return 'two'\n",
    )
    assert _order(d, "system_prompt") == [f"plugin_{i}.py" for i in range(5)]
    assert d.call("system_prompt", event=SystemPromptEvent(["read", "bash"])) == ["one read,bash", "two"]
    reported = [(Path(p).name, h) for p, h, _ in errors]
    assert reported == [("plugin_1.py", "system_prompt"), ("plugin_2.py", "system_prompt")]
    assert errors[0][2] == f"{tmp_path / 'plugin_1.py'}:6: RuntimeError: boom"  # where it raised
    assert errors[1][2] == "returned dict; expected str or None"


def test_each_on_an_observer_ignores_results(tmp_path: Path, errors: Errors) -> None:
    d = _load(tmp_path, errors, "@hookimpl\nasync def host_start(api):\n    CALLS.append(api)\n    return 42\n")
    assert asyncio.run(d.acall("host_start")) == [42]
    assert not errors


def test_call_limits_to_one_plugin(tmp_path: Path, errors: Errors) -> None:
    d = _load(
        tmp_path,
        errors,
        "@hookimpl\ndef register_tools(register):\n    register('a')\n",
        "@hookimpl\ndef register_tools(register):\n    register('b')\n",
    )
    seen: list[str] = []
    target = next(i.plugin_name for i in d.plugins.impls("register_tools") if i.plugin_name.endswith("plugin_1.py"))
    d.call("register_tools", plugin=target, register=seen.append)
    assert seen == ["b"]


def test_first_cancel_wins_and_other_results_are_reported(tmp_path: Path, errors: Errors) -> None:
    d = _load(
        tmp_path,
        errors,
        "@hookimpl\nasync def session_before_switch(event):\n    return {'cancel': True}\n",
        "@hookimpl\ndef session_before_switch(event):\n    return None\n",
        "@hookimpl\nasync def session_before_switch(event):\n    return Cancel('second: ' + event.reason)\n",
        "@hookimpl\ndef session_before_switch(event):\n    return Cancel('third')\n",
    )
    result = asyncio.run(d.acall("session_before_switch", event=SessionBeforeSwitchEvent("new")))
    assert result == Cancel("second: new")
    assert [m for _, _, m in errors] == ["returned dict; expected Cancel or None"]


def test_first_cancel_is_none_when_nobody_cancels(tmp_path: Path, errors: Errors) -> None:
    d = _load(tmp_path, errors, "@hookimpl\ndef session_before_switch(event):\n    return None\n")
    assert asyncio.run(d.acall("session_before_switch", event=SessionBeforeSwitchEvent("new"))) is None


def test_chain_applies_transforms_in_order_and_handled_stops_it(tmp_path: Path, errors: Errors) -> None:
    d = _load(
        tmp_path,
        errors,
        "@hookimpl\ndef input(event):\n    return InputResult.transform(event.text.upper())\n",
        "@hookimpl\ndef input(event):\n    return InputResult.transform('second', [{'type': 'image'}])\n",
    )
    event = InputEvent("hello", None, "rpc", "steer")
    assert asyncio.run(d.acall("input", event=event)) is None
    assert (event.text, event.images, event.kind) == ("second", [{"type": "image"}], "steer")

    (tmp_path / "second").mkdir()
    d = _load(
        tmp_path / "second",
        errors,
        "@hookimpl\ndef input(event):\n    return InputResult.transform('changed')\n",
        "@hookimpl\ndef input(event):\n    return InputResult.handled()\n",
        "@hookimpl\ndef input(event):\n    return InputResult.transform('after handled')\n",
    )
    event = InputEvent("hello")
    assert asyncio.run(d.acall("input", event=event)) == InputResult.handled()
    assert event.text == "changed"  # the transform after the handled result is not applied


def test_chain_collects_agent_start_results(tmp_path: Path, errors: Errors) -> None:
    d = _load(
        tmp_path,
        errors,
        "@hookimpl\ndef before_agent_start(event):\n"
        "    return AgentStartResult('first', [{'customType': 'a', 'content': event.prompt}])\n",
        "@hookimpl\ndef before_agent_start(event):\n    return AgentStartResult(messages=[{'customType': 'b'}])\n",
        "@hookimpl\ndef before_agent_start(event):\n    return AgentStartResult('last')\n",
    )
    event = BeforeAgentStartEvent("go")
    assert asyncio.run(d.acall("before_agent_start", event=event)) is None
    assert event.system_prompt == "last"
    assert event.messages == [{"customType": "a", "content": "go"}, {"customType": "b"}]
    assert AgentStartResult() == AgentStartResult(None, [])


def test_first_block_ignores_non_blocking_decisions(tmp_path: Path, errors: Errors) -> None:
    d = _load(
        tmp_path,
        errors,
        "@hookimpl\ndef tool_call(event):\n    event.input['path'] = 'rewritten'\n    return ToolCallDecision()\n",
        "@hookimpl\ndef tool_call(event):\n    return ToolCallDecision(block=True, reason='no ' + event.tool_name)\n",
        "@hookimpl\ndef tool_call(event):\n    return ToolCallDecision(block=True, reason='later')\n",
    )
    event = ToolCallEvent("read", "c1", {"path": "x"})
    assert asyncio.run(d.acall("tool_call", event=event)) == ToolCallDecision(True, "no read")
    assert event.input == {"path": "rewritten"}


def test_patch_applies_results_in_call_order(tmp_path: Path, errors: Errors) -> None:
    d = _load(
        tmp_path,
        errors,
        "@hookimpl\ndef tool_result(event):\n    return ToolResult.text(event.result.content[0]['text'] + '!')\n",
        "@hookimpl\ndef tool_result(event):\n    return ToolPatch(details={'by': 'second'})\n",
        "@hookimpl\ndef tool_result(event):\n    return {'content': []}\n",
        "@hookimpl\ndef tool_result(event):\n    return ToolPatch(is_error=True)\n",
    )
    event = ToolResultEvent("read", "c1", {}, ToolResult.text("out"))
    assert asyncio.run(d.acall("tool_result", event=event)) is None
    assert event.result == ToolResult.text("out!", {"by": "second"}, True)
    assert [m for _, _, m in errors] == ["returned dict; expected ToolPatch or ToolResult or None"]


def test_first_result_takes_the_first_accepted_one(tmp_path: Path, errors: Errors) -> None:
    d = _load(
        tmp_path,
        errors,
        "@hookimpl\ndef user_bash(event):\n    return None\n",
        "@hookimpl\nasync def user_bash(event):\n    return BashResult('ran ' + event.command, 0)\n",
        "@hookimpl\ndef user_bash(event):\n    return BashResult('never', 1)\n",
    )
    assert asyncio.run(d.acall("user_bash", event=UserBashEvent("ls"))) == BashResult("ran ls", 0)


def test_sync_first_rules_stop_calling_once_decided(tmp_path: Path, errors: Errors) -> None:
    rules = {**DISPATCH_RULES, "system_prompt": HookRule("first_result", (str,), sync=True)}
    d = _load(
        tmp_path,
        errors,
        "@hookimpl\ndef system_prompt(event):\n    return 'first'\n",
        "@hookimpl\ndef system_prompt(event):\n    raise AssertionError('called after the result was decided')\n",
        rules=rules,
    )
    assert d.call("system_prompt", event=SystemPromptEvent()) == "first"
    assert not errors


def test_every_declared_rule_is_one_dispatch_knows(tmp_path: Path, errors: Errors) -> None:
    d = _load(tmp_path, errors)
    for hook, rule in DISPATCH_RULES.items():
        kwargs: dict[str, Any] = {"event": object()}
        if rule.sync:
            d.call(hook, **kwargs)  # no implementations: every rule yields its empty outcome
        else:
            asyncio.run(d.acall(hook, **kwargs))
    with pytest.raises(ValueError, match="unknown combining rule"):
        _Fold(Dispatcher(d.plugins, object(), {"host_start": HookRule("nonsense")}), "host_start", None)  # type: ignore[arg-type]


def test_async_chain_results_reach_the_next_implementation(tmp_path: Path, errors: Errors) -> None:
    """An async ``chain`` hook: the second implementation sees the first one's transform, and
    nothing after a ``handled`` result is called."""
    d = _load(
        tmp_path,
        errors,
        "@hookimpl\nasync def input(event):\n    return InputResult.transform(event.text + ' one')\n",
        "@hookimpl\nasync def input(event):\n    return InputResult.transform(event.text + ' two')\n",
        "@hookimpl\ndef input(event):\n    return InputResult.handled() if event.text == 'x one two' else None\n",
        "@hookimpl\nasync def input(event):\n    raise AssertionError('called after the input was handled')\n",
    )
    event = InputEvent("x", None, "rpc", "prompt")
    assert asyncio.run(d.acall("input", event=event)) == InputResult.handled()
    assert event.text == "x one two"
    assert not errors
