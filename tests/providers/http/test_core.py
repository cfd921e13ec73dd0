"""The shared pieces: streaming JSON, usage pricing, message replay rules, plugin registration."""

from __future__ import annotations

import subprocess
import sys

import pluggy
import pytest

from atomic_host import PROJECT_NAME, hookspec
from atomic_host.contract.providers import ApiImpl, ProviderInfo
from atomic_host.kit.llm.context import clamp_max_tokens, normalize_tool_call_id, transform_messages
from atomic_host.kit.llm.json_parse import parse_streaming_json
from atomic_host.kit.llm.usage import calculate_cost, empty_usage


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {}),
        ("   ", {}),
        ('{"a": 1}', {"a": 1}),
        ('{"command": "l', {"command": "l"}),
        ('{"a": [1, 2', {"a": [1, 2]}),
        ('{"a": "line\nbreak"}', {"a": "line\nbreak"}),  # raw newline inside a string
        ('{"p": "C:\\dir"}', {"p": "C:\\dir"}),  # invalid escape \d kept literally
        ('{"p": "tab\there', {"p": "tab\there"}),
        ("[1, 2]", {}),
        ("garbage{", {}),
        ('{"a": "x\\', {"a": "x"}),
    ],
)
def test_parse_streaming_json(text: str, expected: dict) -> None:
    assert parse_streaming_json(text) == expected


def test_cost_base_and_tiers() -> None:
    model = {
        "cost": {
            "input": 3,
            "output": 15,
            "cacheRead": 0.3,
            "cacheWrite": 3.75,
            "tiers": [
                {"inputTokensAbove": 200000, "input": 6, "output": 22.5, "cacheRead": 0.6, "cacheWrite": 7.5},
                {"inputTokensAbove": 100000, "input": 4, "output": 20, "cacheRead": 0.4, "cacheWrite": 5},
            ],
        }
    }
    usage = {**empty_usage(), "input": 100, "output": 50}
    assert calculate_cost(model, usage)["total"] == pytest.approx(0.00105)
    usage = {**empty_usage(), "input": 150000, "cacheRead": 60000, "output": 1000}
    cost = calculate_cost(model, usage)  # 210000 prompt tokens: the 200k tier
    assert cost["input"] == pytest.approx(6 * 150000 / 1e6)
    assert cost["cacheRead"] == pytest.approx(0.6 * 60000 / 1e6)
    usage = {**empty_usage(), "input": 200000}  # not strictly above 200k: the 100k tier
    assert calculate_cost(model, usage)["input"] == pytest.approx(4 * 200000 / 1e6)


def test_transform_messages_replay_rules() -> None:
    model = {"provider": "anthropic", "api": "anthropic-messages", "id": "claude"}
    foreign = {
        "role": "assistant",
        "provider": "openai",
        "api": "openai-responses",
        "model": "gpt-5",
        "stopReason": "toolUse",
        "content": [
            {"type": "thinking", "thinking": "deep", "thinkingSignature": "{}"},
            {"type": "thinking", "thinking": "", "redacted": True},
            {"type": "toolCall", "id": "call_1|fc_1", "name": "ls", "arguments": {}},
            {"type": "toolCall", "id": "call_2|fc_2", "name": "ls", "arguments": {}},
        ],
    }
    result = {
        "role": "toolResult",
        "toolCallId": "call_1|fc_1",
        "toolName": "ls",
        "content": [],
        "isError": False,
    }
    failed = {**foreign, "stopReason": "error", "content": [{"type": "text", "text": "x"}]}
    out = transform_messages([foreign, result, failed, {"role": "user", "content": "next"}], model)
    assert out[0]["content"][0] == {"type": "text", "text": "deep"}
    assert [b["id"] for b in out[0]["content"][1:]] == ["call_1_fc_1", "call_2_fc_2"]
    assert out[1]["toolCallId"] == "call_1_fc_1"
    assert out[2]["toolCallId"] == "call_2_fc_2" and out[2]["isError"] is True
    assert out[2]["content"][0]["text"] == "No result provided"
    assert [m["role"] for m in out] == ["assistant", "toolResult", "toolResult", "user"]
    assert len(normalize_tool_call_id("x" * 100)) == 64


def test_clamp_max_tokens() -> None:
    model = {"maxTokens": 64000, "contextWindow": 10000}
    ctx = {"messages": [{"role": "user", "content": "a" * 8000}]}  # 2000 tokens
    assert clamp_max_tokens(model, ctx, None) == 10000 - 2000 - 4096
    assert clamp_max_tokens({"maxTokens": 64000, "contextWindow": 1000000}, ctx, None) == 32000


def test_plugin_registers_four_apis_and_faux_provider() -> None:
    class Specs:
        @hookspec
        def register_providers(self, register, api):  # type: ignore[no-untyped-def]
            """Test-local copy of the hook."""

    import builtin_plugins.providers as plugin

    pm = pluggy.PluginManager(PROJECT_NAME)
    pm.add_hookspecs(Specs)
    pm.register(plugin)
    got: list[object] = []
    pm.hook.register_providers(register=got.append, api=None)
    apis = {x.api: x.stream for x in got if isinstance(x, ApiImpl)}
    assert set(apis) == {"anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai", "faux"}
    assert all(isinstance(s, str) and ":" in s for s in apis.values())
    providers = {x.id: x for x in got if isinstance(x, ProviderInfo)}
    assert set(providers) == {"google", "faux"}
    provider = providers["faux"]
    assert provider.always_authenticated
    model = provider.models[0]
    assert (model["id"], model["contextWindow"], model["maxTokens"], model["reasoning"]) == (
        "faux-1",
        128000,
        16384,
        True,
    )
    import importlib

    for target in apis.values():
        module, _, fn = target.partition(":")
        assert callable(getattr(importlib.import_module(module), fn))


def test_registration_module_does_not_import_httpx() -> None:
    code = "import sys, builtin_plugins.providers, builtin_plugins.providers.faux; print('httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
