"""A model that keeps hitting its output limit inside a tool call does not loop forever.

Each cut-off reply's tool call is answered "not executed, re-issue it" and the run goes on, so a
model whose every reply is cut off (a ``maxTokens`` too small for the call it wants to write) would
be asked again and again: with a real provider, an endless paid loop. The second consecutive
cut-off reply ends the run with an error that says what to do.
"""

from __future__ import annotations

from typing import Any

import pytest
from vendor_helpers import CUT_OFF_CASES, NO_RETRY, assistants, blocks, of_type, stream_reply, text_of, tool_results

ADVICE = "Raise maxTokens for vendor/m1 (models.json) or ask for smaller steps."


def _error_text(max_tokens: int) -> str:
    return (
        f"The reply hit the output token limit (maxTokens {max_tokens}) inside a tool call twice in a row, so "
        f"the run stopped: the cut-off tool calls were not run. {ADVICE}"
    )


async def _ends_after_two(host: Any, sse_server: Any, api: str, raw: str, max_tokens: int) -> list[dict[str, Any]]:
    events = await host.client.prompt_and_wait("write the file", timeout=60)
    assert len(sse_server.requests) == 2, "the host kept asking after the second cut-off reply"
    first, second = assistants(events)
    assert first["stopReason"] == "length" and first["rawStopReason"] == raw
    assert second["stopReason"] == "error" and second["rawStopReason"] == raw
    assert second["errorMessage"] == _error_text(max_tokens)
    assert blocks(second, "toolCall"), "the reply keeps what the model sent"
    # One "re-issue it" result, for the first reply; the second reply's call gets none (the run ended).
    (result,) = tool_results(events)
    assert result["toolCallId"] == blocks(first, "toolCall")[0]["id"] and result["isError"] is True
    assert len(of_type(events, "tool_execution_start")) == 1
    assert not (host.cwd / "ran-anyway").exists(), "a cut-off command ran"
    assert of_type(events, "auto_retry_start") == [] and of_type(events, "compaction_start") == []
    assert len(of_type(events, "agent_end")) == 1
    return events


@pytest.mark.parametrize(("api", "cut", "answer", "raw"), CUT_OFF_CASES)
async def test_second_cut_off_reply_in_a_row_ends_the_run(
    vendor_host: Any, sse_server: Any, api: str, cut: str, answer: str, raw: str
) -> None:
    for _ in range(5):  # a model that would be cut off forever
        sse_server.enqueue(stream_reply(cut))
    async with vendor_host(api, settings=NO_RETRY) as host:
        await _ends_after_two(host, sse_server, api, raw, 32000)
        # The session goes on: the next prompt is answered, and its request carries the first
        # reply's call and result but not the failed reply (it is skipped like any error reply).
        sse_server.requests.clear()
        sse_server.replies.clear()
        sse_server.enqueue(stream_reply(answer))
        events = await host.client.prompt_and_wait("do it in smaller steps", timeout=60)
        (reply,) = assistants(events)
        assert text_of(reply) == "All done."
        assert len(sse_server.requests) == 1
        sent = str(sse_server.requests[0].body)
        assert sent.count("not executed") == 1


async def test_recorded_stream_replayed_with_its_own_max_tokens(vendor_host: Any, sse_server: Any) -> None:
    """Modelled on a real Anthropic recording: ``max_tokens`` hit inside a ``tool_use`` block that is
    never closed (no ``content_block_stop``), with the model's ``maxTokens`` equal to the recorded
    output (124 tokens): replayed as the answer to every request, it ran until stopped from outside."""
    for _ in range(5):
        sse_server.enqueue(stream_reply("anthropic/max_tokens_unclosed_tool.sse"))
    model = {"maxTokens": 124, "reasoning": False}
    async with vendor_host("anthropic-messages", settings=NO_RETRY, model=model) as host:
        events = await _ends_after_two(host, sse_server, "anthropic-messages", "max_tokens", 124)
        assert sse_server.requests[0].body["max_tokens"] == 124
        assert not (host.cwd / "guide.txt").exists()
        first, second = assistants(events)
        assert text_of(first) == text_of(second) == "I'll write a long guide to guide.txt in one go."


async def test_a_reply_that_is_not_cut_off_resets_the_count(vendor_host: Any, sse_server: Any) -> None:
    """Cut off, a small complete step (run), cut off again, then an answer: two cut-off replies but
    not in a row, so the run goes on to the end."""
    for name in ("max_tokens_in_tool", "tool_use_echo", "max_tokens_in_tool", "answer"):
        sse_server.enqueue(stream_reply(f"anthropic/{name}.sse"))
    async with vendor_host("anthropic-messages", settings=NO_RETRY) as host:
        events = await host.client.prompt_and_wait("write the file", timeout=60)
        assert [m["stopReason"] for m in assistants(events)] == ["length", "toolUse", "length", "stop"]
        assert text_of(assistants(events)[-1]) == "All done."
        assert [r["isError"] for r in tool_results(events)] == [True, False, True]
        assert (host.cwd / "steps.txt").read_text() == "small step\n"
        assert not (host.cwd / "ran-anyway").exists()
