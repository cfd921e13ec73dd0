"""OpenAI-compatible catalog entries (compat.json) through the real ``atomic --mode rpc`` host and
the real local SSE server: request shape per provider compat, usage/cost, keyless local servers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from atomic_host import testing_sse as sse
from atomic_host.testing import start_host


def _reply(text: str) -> list[str]:
    return sse.openai_chat_frames(
        [
            {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]},
            {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {"id": "c1", "model": "m", "choices": [], "usage": {"prompt_tokens": 1000, "completion_tokens": 100}},
        ]
    )


def _models_json(agent_dir: Path, providers: dict[str, Any]) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))


@pytest.mark.parametrize(
    ("provider", "model", "key_var", "max_field", "rate_in", "rate_out"),
    [
        ("deepseek", "deepseek-chat", "DEEPSEEK_API_KEY", "max_tokens", 0.28, 0.42),
        ("groq", "llama-3.3-70b-versatile", "GROQ_API_KEY", "max_completion_tokens", 0.59, 0.79),
        ("mistral", "codestral-latest", "MISTRAL_API_KEY", "max_tokens", 0.3, 0.9),
    ],
)
async def test_hosted_provider_request_shape_and_cost(
    tmp_path: Path, provider: str, model: str, key_var: str, max_field: str, rate_in: float, rate_out: float
) -> None:
    with sse.SSEServer() as server:
        _models_json(tmp_path / "agent", {provider: {"baseUrl": server.base_url}})
        server.enqueue(_reply("pong"))
        async with start_host("--model", f"{provider}/{model}", base=tmp_path, env={key_var: "k-123"}) as host:
            await host.client.prompt_and_wait("ping")
            assert await host.client.get_last_assistant_text() == "pong"
            stats = await host.client.get_session_stats()
            assert stats["cost"] == pytest.approx(1000 * rate_in / 1e6 + 100 * rate_out / 1e6)
        request = server.requests[0]
        body = request.body
        assert request.headers["authorization"] == "Bearer k-123"
        assert body["model"] == model and body["messages"][0]["role"] == "system"
        assert "store" not in body and max_field in body
        assert body["stream_options"] == {"include_usage": True}


async def test_ollama_models_from_models_json_prompt_without_a_key(tmp_path: Path) -> None:
    with sse.SSEServer() as server:
        local = {"baseUrl": server.base_url, "models": [{"id": "qwen2.5-coder:7b"}]}
        _models_json(tmp_path / "agent", {"ollama": local})
        server.enqueue(_reply("local hello"))
        async with start_host("--model", "ollama/qwen2.5-coder:7b", base=tmp_path) as host:
            await host.client.prompt_and_wait("hi")
            assert await host.client.get_last_assistant_text() == "local hello"
        request = server.requests[0]
        assert "authorization" not in request.headers
        body = request.body
        assert body["messages"][0]["role"] == "system" and "store" not in body and "max_tokens" in body
