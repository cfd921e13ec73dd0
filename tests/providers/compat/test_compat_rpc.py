"""OpenAI-compatible catalog entries (compat.json) through the real ``atomic --mode rpc`` host and
the real local SSE server: request shape per provider compat, usage/cost at the catalog's rates,
which providers ``get_available_models`` lists (keys, keyless local servers), and what a
``models.json`` entry under a catalog provider id inherits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from atomic_host import testing_sse as sse
from atomic_host.testing import start_host
from builtin_plugins.catalog.data import catalog_providers

pytestmark = pytest.mark.slow  # a real SSE server per provider case

CATALOG = {(p.id, m["id"]): m for p in catalog_providers("compat.json") for m in p.models}
HOSTED = {p.id: p.env_keys for p in catalog_providers("compat.json") if not p.always_authenticated}
LOCAL = {p.id for p in catalog_providers("compat.json") if p.always_authenticated}
# No background summary request: it would take the next scripted reply.
QUIET = {"sessionSummary": {"enabled": False}}


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


def _expected_cost(provider: str, model: str, prompt: int = 1000, completion: int = 100) -> float:
    """The cost of one reply at the shipped catalog's rates (the rates themselves are checked
    against genai-prices by test_catalog_prices.py)."""
    rate = CATALOG[(provider, model)]["cost"]
    return prompt * rate["input"] / 1e6 + completion * rate["output"] / 1e6


@pytest.mark.parametrize(
    ("provider", "model", "key_var", "max_field"),
    [
        ("deepseek", "deepseek-chat", "DEEPSEEK_API_KEY", "max_tokens"),
        ("deepseek", "deepseek-reasoner", "DEEPSEEK_API_KEY", "max_tokens"),
        ("groq", "llama-3.3-70b-versatile", "GROQ_API_KEY", "max_completion_tokens"),
        ("mistral", "codestral-latest", "MISTRAL_API_KEY", "max_tokens"),
        ("mistral", "mistral-medium-latest", "MISTRAL_API_KEY", "max_tokens"),
        ("xai", "grok-4", "XAI_API_KEY", "max_completion_tokens"),
        ("xai", "grok-code-fast-1", "XAI_API_KEY", "max_completion_tokens"),
        ("cerebras", "qwen-3-235b-a22b-instruct-2507", "CEREBRAS_API_KEY", "max_completion_tokens"),
        ("openrouter", "openai/gpt-5", "OPENROUTER_API_KEY", "max_tokens"),
    ],
)
async def test_hosted_provider_request_shape_and_cost(
    tmp_path: Path, provider: str, model: str, key_var: str, max_field: str
) -> None:
    with sse.SSEServer() as server:
        _models_json(tmp_path / "agent", {provider: {"baseUrl": server.base_url}})
        server.enqueue(_reply("pong"))
        async with start_host("--model", f"{provider}/{model}", base=tmp_path, env={key_var: "k-123"}) as host:
            await host.client.prompt_and_wait("ping")
            assert (await host.client.get_last_assistant_text()).text == "pong"
            stats = await host.client.get_session_stats()
            assert stats["cost"] == pytest.approx(_expected_cost(provider, model))
            assert stats["cost"] > 0
        request = server.requests[0]
        body = request.body
        assert request.path.endswith("/chat/completions")
        assert request.headers["authorization"] == "Bearer k-123"
        assert body["model"] == model and body["messages"][0]["role"] == "system"
        assert "store" not in body and max_field in body
        assert body[max_field] <= CATALOG[(provider, model)]["maxTokens"]
        other = {"max_tokens", "max_completion_tokens"} - {max_field}
        assert not other & body.keys()
        assert body["stream_options"] == {"include_usage": True}
        if provider in ("xai", "deepseek", "mistral"):  # no reasoning_effort on these services
            assert "reasoning_effort" not in body


async def test_openrouter_sends_its_reasoning_object(tmp_path: Path) -> None:
    """thinkingFormat "openrouter": the level goes in ``reasoning.effort``, never ``reasoning_effort``."""
    with sse.SSEServer() as server:
        _models_json(tmp_path / "agent", {"openrouter": {"baseUrl": server.base_url}})
        server.enqueue(_reply("one"))
        server.enqueue(_reply("two"))
        env = {"OPENROUTER_API_KEY": "or-key-123"}
        async with start_host(
            "--model", "openrouter/anthropic/claude-sonnet-4.5", base=tmp_path, env=env, settings=QUIET
        ) as host:
            await host.client.set_thinking_level("high")
            await host.client.prompt_and_wait("think hard")
            await host.client.set_thinking_level("off")
            await host.client.prompt_and_wait("do not think")
            stats = await host.client.get_session_stats()
            assert stats["cost"] == pytest.approx(2 * _expected_cost("openrouter", "anthropic/claude-sonnet-4.5"))
        high, off = (r.body for r in server.requests)
        assert high["reasoning"] == {"effort": "high"} and "reasoning_effort" not in high
        assert "reasoning" not in off and "reasoning_effort" not in off
        assert high["model"] == "anthropic/claude-sonnet-4.5" and "max_tokens" in high


async def test_cerebras_gpt_oss_keeps_reasoning_effort(tmp_path: Path) -> None:
    """Cerebras has no reasoning_effort, except gpt-oss (a per-model compat flag over the provider's)."""
    with sse.SSEServer() as server:
        _models_json(tmp_path / "agent", {"cerebras": {"baseUrl": server.base_url}})
        server.enqueue(_reply("fast"))
        env = {"CEREBRAS_API_KEY": "cb-key-123"}
        async with start_host("--model", "cerebras/gpt-oss-120b", base=tmp_path, env=env) as host:
            await host.client.set_thinking_level("low")
            await host.client.prompt_and_wait("go")
            stats = await host.client.get_session_stats()
            assert stats["cost"] == pytest.approx(_expected_cost("cerebras", "gpt-oss-120b"))
        body = server.requests[0].body
        assert body["reasoning_effort"] == "low" and "max_completion_tokens" in body and "store" not in body


async def test_mistral_tool_results_carry_the_tool_name(tmp_path: Path) -> None:
    call = {
        "id": "c1",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "delta": {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_7",
                            "type": "function",
                            "function": {"name": "bash", "arguments": json.dumps({"command": "echo from-tool"})},
                        }
                    ],
                },
            }
        ],
    }
    finish = {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
    usage = {"id": "c1", "model": "m", "choices": [], "usage": {"prompt_tokens": 1000, "completion_tokens": 100}}
    with sse.SSEServer() as server:
        _models_json(tmp_path / "agent", {"mistral": {"baseUrl": server.base_url}})
        server.enqueue(sse.openai_chat_frames([call, finish, usage]))
        server.enqueue(_reply("done"))
        env = {"MISTRAL_API_KEY": "mi-key-123"}
        async with start_host(
            "--model", "mistral/mistral-medium-latest", base=tmp_path, env=env, settings=QUIET
        ) as host:
            await host.client.prompt_and_wait("run it")
            assert (await host.client.get_last_assistant_text()).text == "done"
            stats = await host.client.get_session_stats()
            assert stats["cost"] == pytest.approx(2 * _expected_cost("mistral", "mistral-medium-latest"))
        second = server.requests[1].body
        (result,) = [m for m in second["messages"] if m["role"] == "tool"]
        assert result["name"] == "bash" and result["tool_call_id"] == "call_7"
        assert "from-tool" in result["content"]
        (assistant,) = [m for m in second["messages"] if m["role"] == "assistant"]
        assert assistant["tool_calls"][0]["function"]["name"] == "bash"


async def test_ollama_models_from_models_json_prompt_without_a_key(tmp_path: Path) -> None:
    with sse.SSEServer() as server:
        local = {"baseUrl": server.base_url, "models": [{"id": "qwen2.5-coder:7b"}]}
        _models_json(tmp_path / "agent", {"ollama": local})
        server.enqueue(_reply("local hello"))
        async with start_host("--model", "ollama/qwen2.5-coder:7b", base=tmp_path) as host:
            await host.client.prompt_and_wait("hi")
            assert (await host.client.get_last_assistant_text()).text == "local hello"
        request = server.requests[0]
        assert "authorization" not in request.headers
        body = request.body
        assert body["messages"][0]["role"] == "system" and "store" not in body and "max_tokens" in body


def _providers_of(models: list[dict[str, Any]]) -> set[str]:
    return {m["provider"] for m in models}


async def test_available_models_need_a_key_or_a_models_json_entry(tmp_path: Path) -> None:
    """A hosted compat provider is listed only with its key (environment or auth.json); a keyless
    local server only with models of its own in models.json."""
    async with start_host(base=tmp_path / "none") as host:
        listed = _providers_of((await host.client.get_available_models()).models)
    assert not listed & (HOSTED.keys() | LOCAL), listed

    env = {HOSTED["xai"][0]: "xai-key-123", HOSTED["groq"][0]: "groq-key-123"}
    async with start_host(base=tmp_path / "env", env=env) as host:
        models = (await host.client.get_available_models()).models
    listed = _providers_of(models)
    assert {"xai", "groq"} <= listed and not listed & (HOSTED.keys() - {"xai", "groq"}) and not listed & LOCAL
    assert {m["id"] for m in models if m["provider"] == "xai"} == {i for p, i in CATALOG if p == "xai"}

    base = tmp_path / "auth"
    (base / "agent").mkdir(parents=True)
    (base / "agent" / "auth.json").write_text(json.dumps({"cerebras": {"type": "api_key", "key": "cb-key-123"}}))
    _models_json(base / "agent", {"lmstudio": {"models": [{"id": "qwen3-8b"}]}})
    async with start_host(base=base) as host:
        models = (await host.client.get_available_models()).models
    listed = _providers_of(models)
    assert listed & (HOSTED.keys() | LOCAL) == {"cerebras", "lmstudio"}
    (local,) = [m for m in models if m["provider"] == "lmstudio"]
    assert local["id"] == "qwen3-8b" and local["baseUrl"] == "http://localhost:1234/v1"


async def test_models_json_entry_inherits_the_catalog_provider(tmp_path: Path) -> None:
    """A model under a catalog provider id inherits baseUrl, api and compat; models.json's own
    compat (provider or model level) wins over the catalog's."""
    _models_json(
        tmp_path / "agent",
        {
            "vllm": {"models": [{"id": "plain", "reasoning": True}]},
            "xai": {"models": [{"id": "grok-next", "compat": {"maxTokensField": "max_tokens"}}]},
        },
    )
    async with start_host(base=tmp_path, env={"XAI_API_KEY": "xai-key-123"}) as host:
        models = {(m["provider"], m["id"]): m for m in (await host.client.get_available_models()).models}
    plain, grok = models[("vllm", "plain")], models[("xai", "grok-next")]
    assert plain["api"] == grok["api"] == "openai-completions"
    assert plain["baseUrl"] == "http://localhost:8000/v1" and grok["baseUrl"] == "https://api.x.ai/v1"
    assert ("xai", "grok-4") in models  # the catalog's own models stay

    with sse.SSEServer() as server:
        _models_json(
            tmp_path / "agent",
            {
                "vllm": {
                    "baseUrl": server.base_url,
                    "compat": {"supportsDeveloperRole": True},
                    "models": [
                        {"id": "plain", "reasoning": True},
                        {"id": "tuned", "reasoning": True, "compat": {"thinkingTokenBudgetField": "budget"}},
                    ],
                }
            },
        )
        server.enqueue(_reply("a"))
        server.enqueue(_reply("b"))
        async with start_host("--model", "vllm/plain", base=tmp_path, settings=QUIET) as host:
            await host.client.set_thinking_level("high")
            await host.client.prompt_and_wait("first")
            await host.client.set_model("vllm", "tuned")
            await host.client.prompt_and_wait("second")
        plain_body, tuned_body = (r.body for r in server.requests)
    for body in (plain_body, tuned_body):
        # Inherited from compat.json's vllm: max_tokens (detection alone would send
        # max_completion_tokens), no store, no reasoning_effort.
        assert "max_tokens" in body and "max_completion_tokens" not in body and "store" not in body
        assert "reasoning_effort" not in body
        # Overridden at provider level in models.json: the developer role.
        assert body["messages"][0]["role"] == "developer"
    assert plain_body["thinking_token_budget"] > 0  # the catalog's vllm budget field
    assert tuned_body["budget"] == plain_body["thinking_token_budget"] and "thinking_token_budget" not in tuned_body
