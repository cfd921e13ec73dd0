"""The ``summarize`` hook through the real host: a plugin file writes the branch summary of
``navigate_tree`` and the background session summary; blocking the built-in leaves none."""

from __future__ import annotations

import asyncio
from pathlib import Path

from atomic_host.testing import start_host

SUMMARIZER = '''
from atomic_host import hookimpl
from atomic_host.contract.results import Summary


@hookimpl
async def summarize(event, api):
    roles = ",".join(m["role"] for m in event.messages)
    if event.kind == "branch":
        messages = [e for e in event.entries if e["type"] == "message"]
        return Summary(f"plugin branch summary of {len(messages)} messages [{roles}] "
                       f"instructions={event.instructions}", usage={"input": 1, "output": 2})
    if event.kind == "session":
        return Summary(f"plugin session summary [{roles}] by {event.requester.model['id']}")
'''


async def _wait_for_summary(client, timeout: float = 10.0) -> dict:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        summary = (await client.get_session_summary())["summary"]
        if summary is not None:
            return summary
        await asyncio.sleep(0.05)
    raise AssertionError("no session summary was stored")


async def test_a_plugin_summarize_writes_the_branch_and_session_summaries(tmp_path: Path) -> None:
    ext = tmp_path / "summarizer.py"
    ext.write_text(SUMMARIZER)
    async with start_host("--extension", str(ext), settings={"sessionSummary": {"enabled": True}}) as host:
        c = host.client
        host.faux.push("first answer")
        await c.prompt_and_wait("first question")
        summary = await _wait_for_summary(c)
        assert summary["summary"] == "plugin session summary [user,assistant] by faux-1"
        assert len(host.faux_calls()) == 1  # the built-in never asked the model
        assert ((await c.list_sessions()).sessions)[0]["summary"] == summary["summary"]

        host.faux.push("second answer")
        await c.prompt_and_wait("second question")
        entries = (await c.get_entries())["entries"]
        users = [e for e in entries if e["type"] == "message" and e["message"]["role"] == "user"]
        calls = len(host.faux_calls())
        data = await c.navigate_tree(users[1]["id"], {"summarize": True, "customInstructions": "Be terse."})
        assert len(host.faux_calls()) == calls
        entry = data["summaryEntry"]
        assert entry["type"] == "branch_summary" and entry["fromId"] == users[1]["parentId"]
        assert entry["summary"] == "plugin branch summary of 2 messages [user,assistant] instructions=Be terse."
        assert entry["usage"] == {"input": 1, "output": 2}
        host.assert_protocol_lines()


async def test_blocking_the_builtin_leaves_no_summaries() -> None:
    settings = {"sessionSummary": {"enabled": True}, "disabledPlugins": ["builtin_plugins.summaries"]}
    async with start_host(settings=settings) as host:
        c = host.client
        host.faux.push("first answer", "second answer", "this reply must stay queued")
        await c.prompt_and_wait("first question")
        await c.prompt_and_wait("second question")
        await asyncio.sleep(0.3)
        assert (await c.get_session_summary())["summary"] is None
        entries = (await c.get_entries())["entries"]
        second = [e for e in entries if e["type"] == "message" and e["message"]["role"] == "user"][1]
        response = await c.request({"type": "navigate_tree", "targetId": second["id"], "options": {"summarize": True}})
        assert response["success"] is False
        assert response["error"].startswith("No summary strategy: no plugin implements the summarize hook")
        assert (await c.get_entries())["leafId"] == entries[-1]["id"]  # the leaf did not move
        assert len(host.faux_calls()) == 2
        host.assert_protocol_lines()
