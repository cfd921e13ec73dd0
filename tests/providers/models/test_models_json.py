"""models.json: custom providers, defaults, overrides, reroutes, compat merge, broken files."""

from __future__ import annotations

import json
from pathlib import Path

from atomic_host.core.models.registry import ModelRegistry
from builtin_plugins.catalog.data import builtin_providers

OLLAMA = {
    "baseUrl": "http://localhost:11434/v1",
    "api": "openai-completions",
    "apiKey": "ollama",
    "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
    "models": [{"id": "qwen2.5-coder:7b"}],
}


def make(tmp_path: Path, models_json: object | str, env: dict[str, str] | None = None) -> ModelRegistry:
    text = models_json if isinstance(models_json, str) else json.dumps(models_json)
    (tmp_path / "models.json").write_text(text)
    return ModelRegistry(tmp_path, builtin_providers(), {}, env=env or {})


def test_ollama_example(tmp_path: Path) -> None:
    reg = make(tmp_path, {"providers": {"ollama": OLLAMA}})
    assert reg.errors == []
    assert reg.available() == [
        {
            "id": "qwen2.5-coder:7b",
            "name": "qwen2.5-coder:7b",
            "api": "openai-completions",
            "provider": "ollama",
            "baseUrl": "http://localhost:11434/v1",
            "reasoning": False,
            "input": ["text"],
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
            "contextWindow": 128000,
            "maxTokens": 16384,
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        }
    ]
    assert reg.resolve_api_key("ollama") == "ollama"
    assert reg.auth_status("ollama")["source"] == "models_json"
    assert reg.provider_ids()[-1] == "ollama"


def test_keyless_local_server_is_not_available(tmp_path: Path) -> None:
    cfg = {k: v for k, v in OLLAMA.items() if k != "apiKey"}
    reg = make(tmp_path, {"providers": {"ollama": cfg}})
    assert reg.find("ollama", "qwen2.5-coder:7b") is not None
    assert reg.available() == []


def test_env_and_command_keys(tmp_path: Path) -> None:
    data = {
        "providers": {
            "viaenv": {**OLLAMA, "apiKey": "$LOCAL_KEY"},
            "braced": {**OLLAMA, "apiKey": "${LOCAL_KEY}"},
            "viacmd": {**OLLAMA, "apiKey": "!echo key"},
            "unset": {**OLLAMA, "apiKey": "$NOT_SET"},
            "failing": {**OLLAMA, "apiKey": "!exit 3"},
        }
    }
    reg = make(tmp_path, data, {"LOCAL_KEY": "sk-local"})
    assert reg.resolve_api_key("viaenv") == "sk-local"
    assert reg.resolve_api_key("braced") == "sk-local"
    assert reg.resolve_api_key("viacmd") == "key"
    assert reg.resolve_api_key("unset") is None
    assert reg.resolve_api_key("failing") is None
    assert reg.auth_status("unset") == {"configured": False}
    assert reg.auth_status("viacmd")["configured"] is True  # commands are not run for status
    assert {m["provider"] for m in reg.available()} == {"viaenv", "braced", "viacmd", "failing"}


def test_model_fields_and_compat_merge(tmp_path: Path) -> None:
    data = {
        "providers": {
            "vllm": {
                "baseUrl": "http://127.0.0.1:8000/v1",
                "api": "openai-completions",
                "apiKey": "x",
                "compat": {"maxTokensField": "max_tokens", "supportsUsageInStreaming": False},
                "models": [
                    {
                        "id": "qwen3",
                        "name": "Qwen 3",
                        "reasoning": True,
                        "input": ["text", "image"],
                        "contextWindow": 32768,
                        "maxTokens": 8192,
                        "cost": {"input": 0.1},
                        "thinkingLevelMap": {"off": None},
                        "compat": {"supportsUsageInStreaming": True, "thinkingTokenBudgetField": "x"},
                    },
                    {"id": "resp", "api": "openai-responses", "baseUrl": "http://127.0.0.1:8001/v1"},
                ],
            }
        }
    }
    reg = make(tmp_path, data)
    qwen = reg.find("vllm", "qwen3")
    assert qwen is not None
    assert qwen["compat"] == {
        "maxTokensField": "max_tokens",
        "supportsUsageInStreaming": True,
        "thinkingTokenBudgetField": "x",
    }
    assert qwen["cost"] == {"input": 0.1, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    assert (qwen["name"], qwen["contextWindow"], qwen["maxTokens"]) == ("Qwen 3", 32768, 8192)
    resp = reg.find("vllm", "resp")
    assert resp is not None and resp["api"] == "openai-responses"
    assert resp["baseUrl"] == "http://127.0.0.1:8001/v1"


def test_builtin_reroute_upsert_and_overrides(tmp_path: Path) -> None:
    data = {
        "providers": {
            "anthropic": {
                "baseUrl": "http://127.0.0.1:4000",
                "compat": {"supportsEagerToolInputStreaming": False},
                "models": [{"id": "claude-haiku-4-5", "name": "Haiku via proxy"}, {"id": "claude-new"}],
                "modelOverrides": {
                    "claude-sonnet-4-5": {
                        "name": "Sonnet (patched)",
                        "cost": {"input": 2.5},
                        "compat": {"supportsTemperature": False},
                        "id": "ignored",
                        "thinkingLevelMap": {"max": "max"},
                    },
                    "claude-new": {"maxTokens": 1000},
                    "no-such-model": {"name": "x"},
                },
            }
        }
    }
    reg = make(tmp_path, data)
    assert reg.errors == []
    models = [m for m in reg.all_models() if m["provider"] == "anthropic"]
    assert all(m["baseUrl"] == "http://127.0.0.1:4000" for m in models)
    assert models[-1]["id"] == "claude-new" and models[-1]["maxTokens"] == 1000
    assert models[-1]["api"] == "anthropic-messages"
    assert len([m for m in models if m["id"] == "claude-haiku-4-5"]) == 1
    haiku = reg.find("anthropic", "claude-haiku-4-5")
    assert haiku is not None and haiku["name"] == "Haiku via proxy" and haiku["reasoning"] is False
    sonnet = reg.find("anthropic", "claude-sonnet-4-5")
    assert sonnet is not None
    assert sonnet["name"] == "Sonnet (patched)" and sonnet["id"] == "claude-sonnet-4-5"
    assert sonnet["cost"] == {"input": 2.5, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}
    assert sonnet["compat"] == {
        "supportsStrictTools": True,
        "supportsEagerToolInputStreaming": False,
        "supportsTemperature": False,
    }
    assert sonnet["thinkingLevelMap"] == {"max": "max"}
    opus = reg.find("anthropic", "claude-opus-4-6")
    assert opus is not None and opus["compat"]["forceAdaptiveThinking"] is True


def test_cost_tiers_replaced_whole(tmp_path: Path) -> None:
    tiers = [{"inputTokensAbove": 200000, "input": 6, "output": 22.5, "cacheRead": 0.6, "cacheWrite": 7.5}]
    data = {
        "providers": {
            "openai": {
                "models": [
                    {
                        "id": "tiered",
                        "cost": {
                            "input": 3,
                            "tiers": [{"inputTokensAbove": 1, "input": 1}, {"inputTokensAbove": 2, "input": 2}],
                        },
                    }
                ],
                "modelOverrides": {"tiered": {"cost": {"tiers": tiers}}},
            }
        }
    }
    model = make(tmp_path, data).find("openai", "tiered")
    assert model is not None
    assert model["cost"]["tiers"] == tiers and model["cost"]["input"] == 3
    assert model["api"] == "openai-responses" and model["baseUrl"] == "https://api.openai.com/v1"


def test_broken_json_is_reported_not_fatal(tmp_path: Path) -> None:
    reg = make(tmp_path, '{"providers": {"ollama": ', {"OPENAI_API_KEY": "k"})
    assert len(reg.errors) == 1 and "Invalid JSON" in reg.errors[0]
    assert len(reg.available()) == 11  # built-ins still work
    (tmp_path / "models.json").write_text(json.dumps({"providers": {"ollama": OLLAMA}}))
    reg.reload()
    assert reg.errors == [] and reg.find("ollama", "qwen2.5-coder:7b") is not None


def test_invalid_entries_skip_with_errors(tmp_path: Path) -> None:
    data = {
        "providers": {
            "bad": "not an object",
            "nobase": {"api": "openai-completions", "apiKey": "k", "models": [{"id": "m"}]},
            "mixed": {
                **OLLAMA,
                "models": [
                    {"id": "ok"},
                    {"name": "no id"},
                    {"id": "neg", "maxTokens": -1},
                    {"id": "img", "input": ["video"]},
                ],
            },
        }
    }
    reg = make(tmp_path, data)
    assert [m["id"] for m in reg.all_models() if m["provider"] == "mixed"] == ["ok"]
    assert reg.find("nobase", "m") is None
    text = "\n".join(reg.errors)
    for fragment in (
        "'bad' must be an object",
        "'nobase': model 'm' needs api and baseUrl",
        "needs a string id",
        "maxTokens must be a positive integer",
        "input must be a list",
    ):
        assert fragment in text
    assert all(e.startswith("models.json:") for e in reg.errors)
    assert make(tmp_path, "[1, 2]").errors[0].endswith('expected {"providers": {...}}')
    assert make(tmp_path, "").errors == []


def test_reload_picks_up_auth_changes(tmp_path: Path) -> None:
    reg = make(tmp_path, {"providers": {}})
    assert reg.available() == []
    (tmp_path / "auth.json").write_text(json.dumps({"openai": {"type": "api_key", "key": "k"}}))
    reg.reload()
    assert {m["provider"] for m in reg.available()} == {"openai"}
