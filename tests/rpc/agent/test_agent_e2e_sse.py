"""End to end: the host talks to a real local SSE server in each wire API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agent_frames import TEXT_REPLIES, TOOL_REPLIES, models_json
from agent_helpers import FAST_RETRY, kinds, of_type, text_of
from agent_sse import sse

APIS = ["anthropic-messages", "openai-completions", "openai-responses"]


def _write_models(agent_dir: Path, base_url: str, apis: list[str]) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(models_json(base_url, apis))


@pytest.mark.parametrize("api", APIS)
async def test_thinking_text_tool_then_answer(agent_host: Any, sse_server: Any, tmp_path: Path, api: str) -> None:
    _write_models(tmp_path / "agent", sse_server.base_url, [api])
    sse_server.enqueue(TOOL_REPLIES[api]())
    sse_server.enqueue(TEXT_REPLIES[api]("The command printed hello-e2e."))
    # No session summary: its request starts as the run settles and would race the count below.
    quiet = {**FAST_RETRY, "sessionSummary": {"enabled": False}}
    async with agent_host("--model", f"local-{api}/m1", base=tmp_path, settings=quiet) as host:
        events = await host.client.prompt_and_wait("say hello")
        assistants = [e["message"] for e in of_type(events, "message_end") if e["message"]["role"] == "assistant"]
        first, final = assistants
        assert [b["type"] for b in first["content"]] == ["thinking", "text", "toolCall"]
        assert first["content"][0]["thinking"].startswith("Let me check.")
        assert first["content"][2]["arguments"] == {"command": "echo hello-e2e"}
        assert first["stopReason"] == "toolUse" and first["provider"] == f"local-{api}"
        tool_end = of_type(events, "tool_execution_end")[0]
        assert tool_end["result"]["content"][0]["text"].strip() == "hello-e2e"
        assert text_of(final) == "The command printed hello-e2e." and final["stopReason"] == "stop"
        subs = {e["assistantMessageEvent"]["type"] for e in events if e["type"] == "message_update"}
        assert {"thinking_delta", "text_delta", "toolcall_delta", "toolcall_end"} <= subs
        assert kinds(events)[-2:] == ["agent_end", "agent_settled"]
        # The second request carried the tool result and the dummy key.
        assert len(sse_server.requests) == 2
        second = sse_server.requests[1]
        assert "hello-e2e" in str(second.body)
        auth = second.headers.get("x-api-key") or second.headers.get("authorization", "")
        assert "dummy-key-123" in auth
        stats = await host.client.get_session_stats()
        assert stats["toolCalls"] == 1 and stats["cost"] > 0


@pytest.mark.parametrize("api", APIS)
async def test_529_then_success_is_retried(agent_host: Any, sse_server: Any, tmp_path: Path, api: str) -> None:
    _write_models(tmp_path / "agent", sse_server.base_url, [api])
    sse_server.enqueue(
        sse.Reply(status=529, body='{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')
    )
    sse_server.enqueue(TEXT_REPLIES[api]("Back online."))
    async with agent_host("--model", f"local-{api}/m1", base=tmp_path, settings=FAST_RETRY) as host:
        events = await host.client.prompt_and_wait("hi")
        starts = of_type(events, "auto_retry_start")
        assert len(starts) == 1 and starts[0]["delayMs"] == 50 and "529" in starts[0]["errorMessage"]
        assert of_type(events, "auto_retry_end")[0]["success"] is True
        assert (await host.client.get_last_assistant_text()).text == "Back online."


async def test_connection_dropped_mid_stream_is_retried(agent_host: Any, sse_server: Any, tmp_path: Path) -> None:
    api = "openai-completions"
    _write_models(tmp_path / "agent", sse_server.base_url, [api])
    sse_server.enqueue(sse.Reply(chunks=TEXT_REPLIES[api]("Partial answer that never ends", pieces=4), drop_after=3))
    sse_server.enqueue(TEXT_REPLIES[api]("Complete answer."))
    async with agent_host("--model", f"local-{api}/m1", base=tmp_path, settings=FAST_RETRY) as host:
        events = await host.client.prompt_and_wait("hi")
        failed = next(e["message"] for e in of_type(events, "message_end") if e["message"]["role"] == "assistant")
        assert failed["stopReason"] == "error" and failed["errorMessage"]
        assert len(of_type(events, "auto_retry_start")) == 1
        assert of_type(events, "auto_retry_end")[0]["success"] is True
        assert (await host.client.get_last_assistant_text()).text == "Complete answer."
