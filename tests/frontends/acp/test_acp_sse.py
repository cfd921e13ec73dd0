"""End to end with a real provider adapter: ``atomic --mode acp`` against the local SSE test server
(OpenAI Chat Completions wire), a streamed answer with thinking, a bash tool call the editor
approves, and the tool result reaching the model."""

from __future__ import annotations

import json
from pathlib import Path

from acp import text_block
from acp_helpers import RecordingClient, acp_host, chat_chunk

from atomic_host import testing_sse as sse


def _models(agent_dir: Path, base_url: str) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    provider = {
        "baseUrl": base_url,
        "api": "openai-completions",
        "apiKey": "dummy-key-123",
        "models": [{"id": "m1", "reasoning": True}],
    }
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"local": provider}}))


async def test_prompt_with_tool_call_and_permission_over_sse(tmp_path: Path) -> None:
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "bash", "arguments": ""}}
    usage = {"prompt_tokens": 100, "completion_tokens": 40, "total_tokens": 140}
    tool_reply = sse.openai_chat_frames(
        [
            chat_chunk({"role": "assistant", "content": ""}),
            chat_chunk({"reasoning_content": "Let me check."}),
            chat_chunk({"content": "Running it."}),
            chat_chunk({"tool_calls": [call]}),
            chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"command": "echo hi-sse"}'}}]}),
            chat_chunk({}, finish="tool_calls"),
            chat_chunk(None, usage=usage),
        ]
    )
    text_reply = sse.openai_chat_frames(
        [
            chat_chunk({"role": "assistant", "content": ""}),
            chat_chunk({"content": "It printed "}),
            chat_chunk({"content": "hi-sse."}),
            chat_chunk({}, finish="stop"),
            chat_chunk(None, usage=usage),
        ]
    )
    client = RecordingClient(answers=["allow_once"])
    with sse.SSEServer() as server:
        _models(tmp_path / "agent", server.base_url)
        server.enqueue(tool_reply)
        server.enqueue(text_reply)
        async with acp_host(tmp_path, "--model", "local/m1", client=client) as host:
            new = await host.new_session()
            sid = new.session_id
            assert {o.id: o.current_value for o in new.config_options}["model"] == "local/m1"
            response = await host.conn.prompt(session_id=sid, prompt=[text_block("say hi")])
            assert response.stop_reason == "end_turn"
            assert host.client.text("agent_thought_chunk", sid) == "Let me check."
            assert host.client.text(session_id=sid) == "Running it.It printed hi-sse."
            (request,) = client.permission_requests
            assert request["tool_call"].tool_call_id == "call_1"
            assert request["tool_call"].raw_input == {"command": "echo hi-sse"}
            final = [u for u in host.client.of("tool_call_update", sid) if u.status == "completed"][-1]
            assert "hi-sse" in final.content[0].content.text
        assert len(server.requests) == 2
        assert "hi-sse" in json.dumps(server.requests[1].body["messages"][-1])
