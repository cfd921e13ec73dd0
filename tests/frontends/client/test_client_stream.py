"""The RpcClient's run API against the real host: ``stream()`` yields a run's events as they
arrive, ``prompt_and_wait`` says how the run ended (``check=True`` raises), and the exit code is
there after ``async with``."""

from __future__ import annotations

import pytest

from atomic_host.client import RunFailed
from atomic_host.testing import start_host


async def test_stream_yields_the_run_as_it_arrives_and_ends_settled() -> None:
    async with start_host() as host:
        host.faux.push({"content": "streamed reply " * 20, "chunkDelayMs": 5})
        kinds, text = [], ""
        async for event in host.client.stream("hello"):
            kinds.append(event["type"])
            if event["type"] == "message_update" and event["assistantMessageEvent"]["type"] == "text_delta":
                text += event["assistantMessageEvent"]["delta"]
        assert kinds[0] == "agent_start" and kinds[-1] == "agent_settled"
        assert kinds.count("message_update") > 3
        assert text == "streamed reply " * 20
        assert [e async for e in host.client.stream("/no-such-command-here")] != []  # a prompt, not a command


async def test_prompt_and_wait_reports_errors_and_can_raise() -> None:
    async with start_host() as host:
        c = host.client
        host.faux.push("fine")
        result = await c.prompt_and_wait("hi")
        assert result.ok and result.text == "fine" and result.error is None
        host.faux.push({"stopReason": "error", "errorMessage": "400 invalid request"})  # not retried
        result = await c.prompt_and_wait("again")
        assert not result.ok and result.error == "400 invalid request"
        host.faux.push({"stopReason": "error", "errorMessage": "401 invalid key"})
        with pytest.raises(RunFailed, match="401 invalid key"):
            await c.prompt_and_wait("once more", check=True)
    assert c.exit_code == 0
