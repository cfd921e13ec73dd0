"""Auto-retry of transient provider errors (semantics §3.8 and §6.4) with the faux provider."""

from __future__ import annotations

import json
from typing import Any

from agent_helpers import FAST_RETRY, kinds, of_type, text_of

OVERLOADED = {"content": [], "stopReason": "error", "errorMessage": "529 overloaded_error"}


async def test_default_delay_is_2000ms(agent_host: Any) -> None:
    async with agent_host() as host:
        host.faux.push(OVERLOADED, "recovered")
        n0 = len(host.client.events)
        await host.client.prompt("x")
        start = await host.client.wait_for_event("auto_retry_start", after=n0)
        assert start == {
            "type": "auto_retry_start", "attempt": 1, "maxAttempts": 3, "delayMs": 2000,
            "errorMessage": "529 overloaded_error",
        }  # fmt: skip
        # Cancel the 2 s wait rather than sleeping through it.
        await host.client.abort_retry()
        end = await host.client.wait_for_event("auto_retry_end", after=n0)
        assert end["success"] is False and end["finalError"] == "Retry cancelled"


async def test_retry_then_success_with_exponential_delays(agent_host: Any) -> None:
    async with agent_host(settings=FAST_RETRY) as host:
        host.faux.push(OVERLOADED, OVERLOADED, "recovered")
        events = await host.client.prompt_and_wait("x")
        starts = of_type(events, "auto_retry_start")
        assert [(s["attempt"], s["delayMs"]) for s in starts] == [(1, 50), (2, 100)]
        assert all(s["maxAttempts"] == 3 and s["errorMessage"] == "529 overloaded_error" for s in starts)
        assert of_type(events, "auto_retry_end") == [{"type": "auto_retry_end", "success": True, "attempt": 2}]
        assert kinds(events).count("agent_start") == 3
        # No new user message on retries; the failed assistants leave the context but stay in the file.
        assert [text_of(e["message"]) for e in of_type(events, "message_start") if e["message"]["role"] == "user"] == [
            "x"
        ]
        messages = (await host.client.get_messages()).messages
        assert [m["role"] for m in messages] == ["user", "assistant"] and text_of(messages[1]) == "recovered"
        entries = (await host.client.get_entries())["entries"]
        stops = [
            e["message"]["stopReason"]
            for e in entries
            if e["type"] == "message" and e["message"]["role"] == "assistant"
        ]
        assert stops == ["error", "error", "stop"]
        # The retried call sent the same context as the first (failed one dropped).
        calls = host.faux_calls()
        assert calls[0]["context"]["messages"] == calls[2]["context"]["messages"]


async def test_retry_exhaustion(agent_host: Any) -> None:
    settings = {"retry": {"enabled": True, "maxRetries": 2, "baseDelayMs": 20}}
    async with agent_host(settings=settings) as host:
        host.faux.push(OVERLOADED, OVERLOADED, OVERLOADED)
        events = await host.client.prompt_and_wait("x")
        assert [s["delayMs"] for s in of_type(events, "auto_retry_start")] == [20, 40]
        end = of_type(events, "auto_retry_end")
        assert len(end) == 1 and end[0]["success"] is False
        assert "529 overloaded_error" in end[0]["finalError"]
        assert kinds(events)[-1] == "agent_settled"


async def test_abort_during_retry_delay(agent_host: Any) -> None:
    settings = {"retry": {"enabled": True, "maxRetries": 3, "baseDelayMs": 5000}}
    async with agent_host(settings=settings) as host:
        host.faux.push(OVERLOADED, "unused")
        n0 = len(host.client.events)
        await host.client.prompt("x")
        await host.client.wait_for_event("auto_retry_start", after=n0)
        await host.client.abort()
        end = await host.client.wait_for_event("auto_retry_end", after=n0, timeout=3)
        assert end["success"] is False and end["finalError"] == "Retry cancelled"
        state = await host.client.get_state()
        assert not state["isStreaming"]
        assert len(host.faux_calls()) == 1


async def test_set_auto_retry_false_disables_retry(agent_host: Any) -> None:
    async with agent_host(settings=FAST_RETRY) as host:
        await host.client.set_auto_retry(False)
        saved = json.loads((host.agent_dir / "settings.json").read_text())
        assert saved["retry"]["enabled"] is False and saved["retry"]["baseDelayMs"] == 50
        host.faux.push(OVERLOADED, "not used")
        events = await host.client.prompt_and_wait("x")
        assert not of_type(events, "auto_retry_start") and not of_type(events, "auto_retry_end")
        assert of_type(events, "message_end")[-1]["message"]["errorMessage"] == "529 overloaded_error"
        assert len(host.faux_calls()) == 1


async def test_context_overflow_and_auth_errors_are_never_retried(agent_host: Any) -> None:
    async with agent_host(settings=FAST_RETRY) as host:
        host.faux.push(
            {
                "content": [],
                "stopReason": "error",
                "errorMessage": "prompt is too long: 250000 tokens > 200000 maximum",
            },
        )
        events = await host.client.prompt_and_wait("x")
        assert not of_type(events, "auto_retry_start")
        host.faux.push({"content": [], "stopReason": "error", "errorMessage": "401 invalid x-api-key"})
        events = await host.client.prompt_and_wait("y")
        assert not of_type(events, "auto_retry_start")
