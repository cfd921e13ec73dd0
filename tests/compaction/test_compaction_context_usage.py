"""``get_session_stats.contextUsage`` after a compaction (rpc-protocol: "tokens and percent are null
immediately after compaction until a fresh post-compaction assistant response provides valid usage
data"): an estimate of the compacted context must not be shown as if a provider had measured it."""

from __future__ import annotations

from compaction_helpers import seed

from atomic_host.testing import start_host


async def test_context_usage_is_null_after_compaction_until_a_reply_reports_usage() -> None:
    async with start_host() as host:
        c = host.client
        await seed(host)
        before = (await c.get_session_stats())["contextUsage"]
        assert isinstance(before["tokens"], int) and before["tokens"] > 0 and before["percent"] > 0
        host.faux.push("1,5")
        await c.call("compact")
        usage = (await c.get_session_stats())["contextUsage"]
        assert usage == {"tokens": None, "contextWindow": 128000, "percent": None}
        # a failed reply reports nothing usable: still unknown
        host.faux.push({"stopReason": "error", "errorMessage": "400 bad request"})
        await c.prompt_and_wait("third")
        assert (await c.get_session_stats())["contextUsage"]["tokens"] is None
        # a reply with usage measures it again
        host.faux.push({"content": "fine", "usage": {"input": 6400, "output": 10}})
        await c.prompt_and_wait("fourth")
        usage = (await c.get_session_stats())["contextUsage"]
        assert usage["tokens"] == 6410 and usage["percent"] == round(100 * 6410 / 128000, 1)
        host.assert_protocol_lines()
