"""Background session summaries: generated after a run when enabled, stored as session_summary."""

from __future__ import annotations

import asyncio

from atomic_host.testing import start_host


async def _wait_for_summary(client, timeout: float = 10.0) -> dict:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        summary = (await client.get_session_summary())["summary"]
        if summary is not None:
            return summary
        await asyncio.sleep(0.05)
    raise AssertionError("no session summary was stored")


async def test_summary_generated_after_run_and_listed() -> None:
    async with start_host(settings={"sessionSummary": {"enabled": True}}) as host:
        c = host.client
        host.faux.push("The parser test passes now.", "  Fixed an off-by-one   in the parser\n test.  ")
        await c.prompt_and_wait("fix the parser test")
        summary = await _wait_for_summary(c)
        assert summary["summary"] == "Fixed an off-by-one in the parser test."  # whitespace collapsed
        entries = (await c.get_entries())["entries"]
        assistant = [e for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant"][-1]
        assert summary["summarizedThroughId"] == assistant["id"]
        # The summary call was a separate, tool-less request about the conversation.
        call = host.faux_calls()[-1]
        assert call["context"]["tools"] == []
        assert "fix the parser test" in call["context"]["messages"][0]["content"][0]["text"]
        listed = (await c.list_sessions()).sessions
        assert listed[0]["summary"] == summary["summary"]
        assert listed[0]["summarizedThroughId"] == assistant["id"]


async def test_no_summary_when_disabled_or_for_unopted_faux() -> None:
    for settings in ({"sessionSummary": {"enabled": False}}, None):
        async with start_host(settings=settings) as host:
            host.faux.push("answer", "this reply must stay queued")
            await host.client.prompt_and_wait("question")
            await asyncio.sleep(0.3)
            assert (await host.client.get_session_summary())["summary"] is None
            assert len(host.faux_calls()) == 1
