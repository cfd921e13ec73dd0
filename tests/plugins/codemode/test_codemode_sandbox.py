"""codemode end to end: a real worker process, real QuickJS, real tools behind call_tool."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from builtin_plugins import codemode
from builtin_plugins.codemode.tool import CodemodeParams, callable_tools, describe_tools, run
from builtin_plugins.codemode.worker import candidate_bodies


async def go(host, code: str, timeout: float | None = None):
    return await run(CodemodeParams(code=code, timeout=timeout), host.ctx())


async def test_composes_two_tool_calls(host, tmp_path: Path, live_workers) -> None:
    (tmp_path / "n.txt").write_text("40")
    code = """
const file = await tools.read({path: "n.txt"});
const sum = await tools.add({a: Number(file.text), b: 2});
({sum: Number(sum.text), bytes: file.details.bytes, error: sum.isError})
"""
    result = await go(host, code)
    assert not result.is_error, result.content
    assert json.loads(result.content[0]["text"]) == {"sum": 42, "bytes": 2, "error": False}
    assert [c[0] for c in host.calls] == ["read", "add"]
    assert result.details["toolCalls"] == [
        {"name": "read", "isError": False},
        {"name": "add", "isError": False},
    ]


async def test_console_log_and_return(host, live_workers) -> None:
    result = await go(host, 'console.log("hello", 1, {a: [1]}); console.error("bad"); return "done"')
    text = result.content[0]["text"]
    assert text == 'hello 1 {\n  "a": [\n    1\n  ]\n}\nbad\n\ndone'
    assert host.updates and host.updates[-1].content[0]["text"].endswith("bad")


async def test_no_result_no_logs(host, live_workers) -> None:
    result = await go(host, "const x = 1;")
    assert result.content[0]["text"] == "(no output)"
    assert not result.is_error


async def test_promise_all_runs_tools_concurrently(host, live_workers) -> None:
    start = time.monotonic()
    result = await go(host, "(await Promise.all([1, 2, 3].map(() => tools.sleep({seconds: 0.4})))).map(r => r.text)")
    assert json.loads(result.content[0]["text"]) == ["slept"] * 3
    assert time.monotonic() - start < 1.1  # sequential would be >= 1.2 s


async def test_syntax_error(host, live_workers) -> None:
    result = await go(host, "const x = ;")
    assert result.is_error
    assert "SyntaxError" in result.content[0]["text"]


async def test_thrown_error_keeps_logs(host, live_workers) -> None:
    result = await go(host, 'console.log("before")\nthrow new Error("boom")')
    assert result.is_error
    text = result.content[0]["text"]
    assert text.startswith("before\n\ncodemode failed: Error: boom")
    assert "<input>:2:" in text  # line numbers are the user's


async def test_tool_error_is_a_result_not_a_throw(host, live_workers) -> None:
    code = 'const r = await tools.read({path: "missing.txt"}); [r.isError, r.text]'
    result = await go(host, code)
    assert not result.is_error
    assert json.loads(result.content[0]["text"]) == [True, "File not found: missing.txt"]
    bad_args = await go(host, "(await tools.add({a: 'x'})).isError")
    assert bad_args.content[0]["text"] == "true"


async def test_model_only_tools_are_not_callable(host, live_workers) -> None:
    result = await go(host, "Object.keys(tools).join(',')")
    assert result.content[0]["text"] == "add,read,sleep"
    thrown = await go(host, "await tools.codemode({code: '1'})")
    assert thrown.is_error and 'Unknown tool "codemode"' in thrown.content[0]["text"]
    assert all(name != "codemode" for name, _ in host.calls)
    assert [t.name for t in callable_tools(host.ctx())] == ["add", "read", "sleep"]


async def test_no_host_capabilities(host, live_workers) -> None:
    code = "[typeof require, typeof fetch, typeof std, typeof os, typeof setTimeout, typeof process].join()"
    result = await go(host, code)
    assert result.content[0]["text"] == ",".join(["undefined"] * 6)
    imported = await go(host, 'await import("os")')
    assert imported.is_error


async def test_infinite_loop_killed_by_wall_clock(host, live_workers) -> None:
    start = time.monotonic()
    result = await go(host, "while (true) {}", timeout=1)
    elapsed = time.monotonic() - start
    assert result.is_error and "timed out after 1 seconds" in result.content[0]["text"]
    assert result.details["timedOut"] is True
    assert 0.9 < elapsed < 2.5
    assert live_workers() == set()


async def test_memory_bomb_hits_limit(host, live_workers) -> None:
    result = await go(host, 'let a = []; while (true) a.push("x".repeat(4096) + a.length)', timeout=10)
    assert result.is_error
    assert "out of memory" in result.content[0]["text"]


async def test_deep_recursion_hits_stack_limit(host, live_workers) -> None:
    result = await go(host, "function f() { return f() }\nf()")
    assert result.is_error and "Maximum call stack size exceeded" in result.content[0]["text"]


async def test_abort_kills_worker(host, live_workers) -> None:
    task = asyncio.ensure_future(go(host, "while (true) {}", timeout=30))
    for _ in range(100):  # wait until the worker is up
        await asyncio.sleep(0.02)
        if live_workers():
            break
    assert live_workers()
    start = time.monotonic()
    host.signal.set()
    result = await task
    assert time.monotonic() - start < 0.5
    assert result.is_error and result.content[0]["text"] == "codemode aborted"
    assert live_workers() == set()


async def test_abort_during_tool_call(host, live_workers) -> None:
    task = asyncio.ensure_future(go(host, "await tools.sleep({seconds: 20})"))
    for _ in range(150):
        await asyncio.sleep(0.02)
        if host.calls:
            break
    host.signal.set()
    result = await asyncio.wait_for(task, 2)
    assert result.details["aborted"] is True


async def test_never_settling_promise(host, live_workers) -> None:
    result = await go(host, "await new Promise(() => {})")
    assert result.is_error and "never settled" in result.content[0]["text"]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("1 + 1", "return (1 + 1"),
        ("const a = 1\na * 2;", "const a = 1\nreturn (a * 2"),
        ("const a = [1,\n2]\na", "return (a"),
        ("if (x) {\n y \n}", None),
        ("const s = `a;${'b;c'}`\ns.length // trailing", "return (s.length // trailing\n);"),
        ("foo\n  .bar()", "return (foo\n  .bar()"),
    ],
)
def test_final_expression_detection(code: str, expected: str | None) -> None:
    bodies = candidate_bodies(code)
    assert bodies[-1] == code
    if expected is None:
        assert len(bodies) == 1
    else:
        assert expected in bodies[0]


def test_registration_and_description() -> None:
    seen = []
    codemode.register_tools(seen.append)
    (tool,) = seen
    assert (tool.name, tool.opt_in, tool.exposure, tool.source_path) == (
        "codemode",
        True,
        "model-only",
        "builtin:codemode",
    )
    assert tool.source == 'built-in extension "codemode"'
    assert set(tool.json_schema()["properties"]) == {"code", "timeout"}
    assert "tools.<name>" in tool.description


def test_describe_tools(host) -> None:
    text = describe_tools(callable_tools(host.ctx()))
    assert "- tools.add({a, b}) - Add two numbers." in text.splitlines()


async def test_already_aborted_spawns_nothing(host, live_workers) -> None:
    host.signal.set()
    result = await go(host, "1")
    assert result.is_error and result.details["aborted"] is True and result.details["wallTimeMs"] < 50


async def test_cancelling_the_handler_kills_worker(host, live_workers) -> None:
    task = asyncio.ensure_future(go(host, "while (true) {}", timeout=30))
    for _ in range(100):
        await asyncio.sleep(0.02)
        if live_workers():
            break
    assert live_workers()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert live_workers() == set()
