"""``navigate_tree {summarize: true}`` retries the branch summary's request on a transient provider
error, with the same policy as runs and compaction (``retry.*``, ``retry-after``), and reports it as
``summarization_retry_*`` events with ``source: "branchSummary"`` — over a real HTTP server that
answers as Anthropic does (a 529 ``overloaded_error``)."""

from __future__ import annotations

from typing import Any

from vendor_helpers import NO_RETRY, error_reply, of_type, stream_reply

from atomic_host.client import RpcError


async def _two_exchanges(host: Any) -> str:
    """Two prompts; the id of the second user message (navigating there abandons its exchange)."""
    await host.client.prompt_and_wait("first question")
    await host.client.prompt_and_wait("second question")
    entries = (await host.client.get_entries())["entries"]
    users = [e for e in entries if e["type"] == "message" and e["message"]["role"] == "user"]
    return users[1]["id"]


async def test_a_529_during_the_branch_summary_is_retried(vendor_host: Any, sse_server: Any) -> None:
    sse_server.enqueue(stream_reply("anthropic/answer.sse"))
    sse_server.enqueue(stream_reply("anthropic/answer.sse"))
    sse_server.enqueue(error_reply(529, "anthropic/http_529_overloaded.json", {"retry-after": "0.3"}))
    sse_server.enqueue(stream_reply("anthropic/answer.sse"))  # the summary: "All done."
    async with vendor_host("anthropic-messages") as host:
        target = await _two_exchanges(host)
        seen = len(host.client.events)
        data = await host.client.navigate_tree(target, {"summarize": True})
        assert data["summaryEntry"]["summary"] == "All done."
        events = [e for e in host.client.events[seen:] if e["type"].startswith("summarization_retry")]
        scheduled, started, finished = events
        assert scheduled["type"] == "summarization_retry_scheduled"
        assert scheduled["attempt"] == 1 and scheduled["maxAttempts"] == 3
        assert scheduled["delayMs"] == 300  # the server's retry-after, longer than baseDelayMs 50
        assert "overloaded" in scheduled["errorMessage"].lower()
        assert started == {"type": "summarization_retry_attempt_start", "source": "branchSummary"}
        assert finished == {"type": "summarization_retry_finished"}
        assert len(sse_server.requests) == 4
        # both summary requests asked for the abandoned exchange, without tools
        for request in sse_server.requests[2:]:
            assert "second question" in str(request.body["messages"]) and not request.body.get("tools")
        assert [m["role"] for m in await host.client.get_messages()][-1] == "branchSummary"


async def test_with_retries_off_the_first_529_fails_the_navigation(vendor_host: Any, sse_server: Any) -> None:
    sse_server.enqueue(stream_reply("anthropic/answer.sse"))
    sse_server.enqueue(stream_reply("anthropic/answer.sse"))
    sse_server.enqueue(error_reply(529, "anthropic/http_529_overloaded.json"))
    async with vendor_host("anthropic-messages", settings=NO_RETRY) as host:
        target = await _two_exchanges(host)
        leaf = (await host.client.get_entries())["leafId"]
        seen = len(host.client.events)
        try:
            await host.client.navigate_tree(target, {"summarize": True})
        except RpcError as exc:
            assert "overloaded" in str(exc).lower()
        else:
            raise AssertionError("navigate_tree should have failed")
        assert not of_type(host.client.events[seen:], "summarization_retry_scheduled")
        assert len(sse_server.requests) == 3
        assert (await host.client.get_entries())["leafId"] == leaf  # nothing moved
