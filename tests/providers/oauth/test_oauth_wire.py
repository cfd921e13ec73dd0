"""The requests a subscription token is sent with, through the real ``atomic --mode rpc`` and a local
model server, checked against what pi (pi-mono ``packages/ai/src/providers/openai-codex-responses.ts``,
``github-copilot-headers.ts``) and Codex (``codex-rs/codex-api/src/common.rs`` ``ResponsesApiRequest``,
``auth.rs``, ``requests/headers.rs``) send: the ChatGPT Codex backend's path, headers and body, and
GitHub Copilot's per-request headers."""

from __future__ import annotations

import json
import time
from pathlib import Path

from oauth_helpers import anthropic_reply, assert_no_secret_written, login_host, oauth_env
from oauth_server import OAuthServer, fake_jwt

from atomic_host.testing import start_host
from atomic_host.testing_sse import SSEServer, anthropic_frames, openai_chat_frames, responses_frames


def codex_reply(text: str, terminal: str = "response.done") -> list[str]:
    item = {"id": "msg_1", "type": "message", "role": "assistant", "content": []}
    usage = {"input_tokens": 10, "output_tokens": 2, "total_tokens": 12}
    return responses_frames([
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": text},
        {"type": "response.output_item.done", "output_index": 0,
         "item": {**item, "content": [{"type": "output_text", "text": text}]}},
        {"type": terminal, "response": {"id": "resp_1", "status": "completed", "usage": usage}},
    ])


async def test_a_chatgpt_token_is_sent_to_the_codex_backend_in_its_shape(tmp_path: Path) -> None:
    access = fake_jwt({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-wire-42"}, "n": "0123456789"})
    stored = {"openai-codex": {"type": "oauth", "access": access, "refresh": "rt-codex-refresh-0123456789",
                               "expires": int(time.time() * 1000) + 3_600_000, "accountId": "acct-wire-42"}}
    with OAuthServer() as oauth, SSEServer() as llm:
        async with login_host(tmp_path, "--model", "openai-codex/gpt-5.2", env=oauth_env(oauth, "openai-codex"),
                              models={"openai-codex": {"baseUrl": llm.base_url}}, auth=stored) as host:
            c = host.client
            llm.enqueue(codex_reply("hello from codex"))
            result = await c.prompt_and_wait("hi codex")
            assert result.ok, result.error
            assert "hello from codex" in result.text  # "response.done" ends the stream as completed
            [request] = llm.requests
            assert request.method == "POST" and request.path == "/codex/responses"
            h = request.headers
            assert h["authorization"] == f"Bearer {access}"
            assert h["chatgpt-account-id"] == "acct-wire-42"
            assert h["originator"] == "pi"  # the originator the sign-in used (pi's client id)
            assert h["openai-beta"] == "responses=experimental"
            assert h["accept"] == "text/event-stream"
            session_id = (await c.call("get_state"))["sessionId"]
            assert h["session_id"] == session_id

            body = request.body
            assert body["model"] == "gpt-5.2"
            assert body["store"] is False and body["stream"] is True
            assert isinstance(body["instructions"], str) and body["instructions"]  # the system prompt
            assert all(item.get("role") not in ("system", "developer") for item in body["input"])
            assert body["input"][-1]["role"] == "user"
            assert "hi codex" in json.dumps(body["input"][-1])
            assert "max_output_tokens" not in body  # the backend rejects it
            assert body["text"] == {"verbosity": "medium"}
            assert body["include"] == ["reasoning.encrypted_content"]
            assert body["tool_choice"] == "auto" and body["parallel_tool_calls"] is True
            assert body["tools"] and all(t["type"] == "function" and t["strict"] is None for t in body["tools"])
            assert body["prompt_cache_key"] == session_id
            assert oauth.requests == []  # a fresh token: no refresh
            assert_no_secret_written(host, tmp_path, [access, "rt-codex-refresh-0123456789"])


def chat_frames(*chunks: dict) -> list[str]:
    return openai_chat_frames([*chunks, {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                                         "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}])


async def test_copilot_requests_say_who_initiated_them(tmp_path: Path) -> None:
    github = "gho_wire_github_token_0123456789"
    copilot = "tid=wire-copilot-token-0123;exp=1"
    stored = {"github-copilot": {"type": "oauth", "access": copilot, "refresh": github,
                                 "expires": int(time.time() * 1000) + 3_600_000}}
    call = {"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": "echo copilot-tool"})}}
    with OAuthServer() as oauth, SSEServer() as llm:
        async with login_host(tmp_path, "--model", "github-copilot/gpt-4.1", env=oauth_env(oauth, "github-copilot"),
                              models={"github-copilot": {"baseUrl": llm.base_url}}, auth=stored) as host:
            llm.enqueue(openai_chat_frames([
                {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}}]},
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
                 "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}},
            ]))
            llm.enqueue(chat_frames({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "done"}}]}))
            result = await host.client.prompt_and_wait("run the tool")
            assert result.ok, result.error
            first, second = llm.requests
            for request in (first, second):
                assert request.headers["authorization"] == f"Bearer {copilot}"
                assert request.headers["copilot-integration-id"] == "vscode-chat"
                assert request.headers["editor-version"].startswith("vscode/")
                assert request.headers["openai-intent"] == "conversation-edits"
                assert "copilot-vision-request" not in request.headers
            assert first.headers["x-initiator"] == "user"
            assert second.headers["x-initiator"] == "agent"  # the follow-up after the tool result
            assert_no_secret_written(host, tmp_path, [github, copilot])


def anthropic_tool_reply(call_id: str, name: str, arguments: dict) -> list[str]:
    usage = {"input_tokens": 5, "output_tokens": 2}
    block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
    return anthropic_frames([
        {"type": "message_start", "message": {"id": "m1", "role": "assistant", "content": [], "usage": usage}},
        {"type": "content_block_start", "index": 0, "content_block": block},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": json.dumps(arguments)}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 2}},
        {"type": "message_stop"},
    ])  # fmt: skip


async def test_a_claude_subscription_token_names_tools_as_claude_code_does(tmp_path: Path) -> None:
    """pi-mono ``packages/ai/src/providers/anthropic.ts``: with an OAuth token the tools go out in
    Claude Code's casing (bash → Bash) and the reply's names map back to ours; other names stay."""
    token = "sk-ant-oat01-subscription-token-for-tools-0123"
    with SSEServer() as llm:
        agent = tmp_path / "agent"
        agent.mkdir()
        (agent / "models.json").write_text(json.dumps({"providers": {"anthropic": {"baseUrl": llm.base_url}}}))
        env = {"ANTHROPIC_OAUTH_TOKEN": token}
        async with start_host("--model", "anthropic/claude-sonnet-4-5", base=tmp_path, env=env, faux=False) as host:
            c = host.client
            llm.enqueue(anthropic_tool_reply("toolu_1", "Bash", {"command": "echo from-bash"}))
            llm.enqueue(anthropic_reply("done"))
            result = await c.prompt_and_wait("run it")
            assert result.ok, result.error
            [end] = [e for e in result if e["type"] == "tool_execution_end"]
            assert end["toolName"] == "bash" and "from-bash" in json.dumps(end["result"])
            first, second = llm.requests[0].body, llm.requests[1].body
            names = {t["name"] for t in first["tools"]}
            assert {"Read", "Bash", "Edit", "Write"} <= names and "find" in names and "bash" not in names
            [call] = [b for m in second["messages"] for b in m["content"] if b.get("type") == "tool_use"]
            assert call["name"] == "Bash"
            messages = (await c.call("get_messages"))["messages"]
            assistant = [m for m in messages if m["role"] == "assistant"]
            [stored] = [b for m in assistant for b in m["content"] if b["type"] == "toolCall"]
            assert stored["name"] == "bash"
