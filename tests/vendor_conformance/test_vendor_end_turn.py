"""``endTurn`` on the assistant message when the provider says explicitly whether the model ended its
turn: Anthropic's ``stop_reason`` (``end_turn`` is the end; ``tool_use``, ``pause_turn``, ``max_tokens``
are not) and the Codex/Responses terminal ``response.end_turn``. Absent where the API says nothing
(Chat Completions, a Responses stream without the field)."""

from __future__ import annotations

from typing import Any

import pytest
from vendor_helpers import assistants, stream_reply


@pytest.mark.parametrize(
    ("api", "fixtures", "expected"),
    [
        ("anthropic-messages", ["anthropic/answer.sse"], [True]),
        ("anthropic-messages", ["anthropic/thinking_tool.sse", "anthropic/answer.sse"], [False, True]),
        ("openai-responses", ["openai_responses/answer_end_turn.sse"], [True]),
        ("openai-responses", ["openai_responses/answer.sse"], [None]),
        ("openai-completions", ["openai_chat/answer.sse"], [None]),
    ],
)
async def test_end_turn_is_reported_where_the_api_carries_it(
    vendor_host: Any, sse_server: Any, api: str, fixtures: list[str], expected: list[bool | None]
) -> None:
    for name in fixtures:
        sse_server.enqueue(stream_reply(name))
    async with vendor_host(api) as host:
        events = await host.client.prompt_and_wait("hi")
        replies = assistants(events)
        assert [m.get("endTurn") for m in replies] == expected
        assert all(m["stopReason"] in ("stop", "toolUse") for m in replies)
        # the stored message keeps it too
        stored = [m for m in await host.client.get_messages() if m["role"] == "assistant"]
        assert [m.get("endTurn") for m in stored] == expected
