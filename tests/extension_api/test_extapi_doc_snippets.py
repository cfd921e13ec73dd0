"""Every Python snippet of docs/hooks.md and docs/extensions.md runs as written: each imports on its
own; the plugin snippets are loaded together into one real host, which is driven through every hook
they implement (prompts, tools, commands, bash, a provider over HTTP, compaction, navigation, new
session, recovery, exit) without a single ``extension_error``; the testing snippet runs under pytest."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from extapi_helpers import QUIET, chat_reply, errors, write_models

from atomic_host.testing import start_host

DOCS = Path(__file__).resolve().parents[2] / "docs"
FENCE = re.compile(r"```python\n(.*?)```", re.S)


def snippets() -> list[tuple[str, int, str]]:
    found = []
    for name in ("hooks.md", "extensions.md"):
        text = (DOCS / name).read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            found.append((name, text[: m.start()].count("\n") + 2, m.group(1)))
    return found


SNIPPETS = snippets()


@pytest.mark.parametrize(("doc", "line", "source"), SNIPPETS, ids=[f"{d}:{n}" for d, n, _ in SNIPPETS])
def test_each_snippet_imports_on_its_own(doc: str, line: int, source: str) -> None:
    module = types.ModuleType(f"snippet_{line}")
    exec(compile(source, f"docs/{doc}:{line}", "exec"), module.__dict__)  # a NameError here = not as written


def _plugin_snippets(into: Path) -> list[Path]:
    into.mkdir()
    files = []
    for doc, line, source in SNIPPETS:
        if "@hookimpl" in source:
            path = into / f"{doc.split('.')[0]}_{line}.py"
            path.write_text(source)
            files.append(path)
    return files


async def test_the_plugin_snippets_run_in_a_real_host(sse_server: Any, tmp_path: Path) -> None:
    files = _plugin_snippets(tmp_path / "snippets")
    assert len(files) > 30
    write_models(tmp_path / "agent", sse_server.base_url)
    sse_server.enqueue(chat_reply("over http"))
    args = [a for f in files for a in ("-e", str(f))]
    async with start_host(*args, base=tmp_path, settings=QUIET) as host:
        c = host.client
        assert (await c.get_state())["sessionName"] == "scratch"  # session_start's snippet
        # tools (word_count, shout) through the tool_call / tool_result / message_end / context hooks
        host.faux.tool_call("word_count", {"text": "a b c"})
        host.faux.tool_call("shout", {"text": "hi"})
        host.faux.tool_call("bash", {"command": "echo fine"})
        host.faux.push("done")
        run = await c.prompt_and_wait("!!count the words")  # the input snippet transforms "!!"
        ends = {e["toolName"]: e for e in run if e["type"] == "tool_execution_end"}
        assert ends["word_count"]["result"]["content"][0]["text"] == "3"
        assert ends["shout"]["result"]["content"][0]["text"] == "HI"
        assert not ends["bash"]["isError"] and ends["bash"]["result"]["details"].get("audited") is None
        assert "Be brief. count the words" in str(host.faux_calls()[0]["context"]["messages"])
        await c.prompt("/hello there")
        await c.prompt("/shout hey")
        await c.prompt("/branch-here")
        assert (await c.call("bash", command="whoami"))["output"] == "a plugin\n"  # user_bash's snippet
        await c.call("set_thinking_level", level="low")
        # a provider over HTTP: the provider hook snippets
        await c.call("set_model", provider="local", modelId="m1")
        assert (await c.prompt_and_wait("over the wire")).text == "over http"
        assert sse_server.requests[0].headers["x-session-id"] == (await c.get_state())["sessionId"]
        await c.call("set_model", provider="faux", modelId="faux-1")
        host.faux.push("second")
        await c.prompt_and_wait("a second prompt")
        compacted = await c.call("compact")  # the compact snippet writes the summary
        assert compacted["rung"] == "my-plugin"
        entries = (await c.call("get_entries"))["entries"]
        first_user = next(e["id"] for e in entries if e["type"] == "message" and e["message"]["role"] == "user")
        moved = await c.call("navigate_tree", targetId=first_user, options={"summarize": True})
        assert moved["summaryEntry"]["summary"].startswith("Left a branch of")  # the summarize snippet
        await c.call("export_html")
        await c.call("start_pending_recovery")
        host.faux.push("in a new session")
        await c.new_session()
        await c.prompt_and_wait("something new")
        forked = await c.call("fork", entryId=next(
            e["id"] for e in (await c.call("get_entries"))["entries"] if e["type"] == "message"
        ))  # fmt: skip
        assert forked["cancelled"] is False
        await c.call("get_shortcuts")
        await c.call("reload")
        assert errors(c.events) == []


def test_the_testing_snippet_runs_under_pytest(tmp_path: Path) -> None:
    by_name = {}
    for _doc, _line, source in SNIPPETS:
        if source.startswith("# ~/.atomic/agent/extensions/shout.py"):
            by_name["shout.py"] = source
        elif "async def test_shout(host_factory)" in source:
            by_name["test_shout.py"] = source
    assert set(by_name) == {"shout.py", "test_shout.py"}
    for name, source in by_name.items():
        (tmp_path / name).write_text(source)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "asyncio_mode=auto",
         "-p", "no:xdist", "test_shout.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
