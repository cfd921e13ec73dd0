"""The shipped catalog: shape, prices, thinking maps, plugin registration."""

from __future__ import annotations

import pluggy
import pytest
from model_helpers import containers

from atomic_host import PROJECT_NAME, hookspec
from atomic_host.contract.providers import ProviderInfo
from atomic_host.core.models.thinking import LEVELS
from atomic_host.kit.copies import json_copy
from builtin_plugins.catalog.data import _load, builtin_providers, catalog_providers, provenance

REQUIRED = {
    "id": str,
    "name": str,
    "api": str,
    "provider": str,
    "baseUrl": str,
    "reasoning": bool,
    "input": list,
    "cost": dict,
    "contextWindow": int,
    "maxTokens": int,
}
ALL_MODELS = [m for p in builtin_providers() for m in p.models]


def test_providers_and_env_keys() -> None:
    providers = {p.id: p for p in builtin_providers()}
    assert set(providers) == {"anthropic", "openai"}
    assert providers["anthropic"].env_keys == ["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"]
    assert providers["anthropic"].api == "anthropic-messages"
    assert providers["anthropic"].base_url == "https://api.anthropic.com"
    assert providers["openai"].env_keys == ["OPENAI_API_KEY"]
    assert providers["openai"].api == "openai-responses"
    assert providers["openai"].base_url == "https://api.openai.com/v1"
    assert "never fetched" in provenance()


@pytest.mark.parametrize("model", ALL_MODELS, ids=lambda m: m["id"])
def test_model_fields(model: dict) -> None:
    for key, kind in REQUIRED.items():
        assert isinstance(model[key], kind), key
    assert set(model["input"]) <= {"text", "image"} and "text" in model["input"]
    cost = model["cost"]
    assert cost["input"] > 0 and cost["output"] > 0 and cost["cacheRead"] > 0
    assert cost["output"] >= cost["input"] > cost["cacheRead"]
    assert 0 < model["maxTokens"] <= model["contextWindow"]
    for level, value in (model.get("thinkingLevelMap") or {}).items():
        assert level in LEVELS and (value is None or isinstance(value, str))
    if model["provider"] == "anthropic":
        assert cost["cacheWrite"] == pytest.approx(cost["input"] * 1.25)
        assert model["compat"]["supportsStrictTools"] is True


def test_unique_ids_and_expected_models() -> None:
    keys = [(m["provider"], m["id"]) for m in ALL_MODELS]
    assert len(keys) == len(set(keys))
    ids = {m["id"] for m in ALL_MODELS}
    assert {
        "claude-opus-4-1",
        "claude-opus-4-5",
        "claude-sonnet-4-5",
        "claude-sonnet-4-20250514",
        "claude-haiku-4-5",
        "claude-3-5-haiku-latest",
        "gpt-5",
        "gpt-5-mini",
        "gpt-5-nano",
        "gpt-4.1",
        "gpt-4.1-mini",
        "gpt-4o",
        "gpt-4o-mini",
        "o3",
        "o4-mini",
    } <= ids


def test_generated_map_rules() -> None:
    by_id = {m["id"]: m for m in ALL_MODELS}
    for mid in ("claude-opus-4-6", "claude-sonnet-4-6"):
        assert by_id[mid]["compat"]["forceAdaptiveThinking"] is True
        assert by_id[mid]["thinkingLevelMap"]["max"] == "max"
    assert "forceAdaptiveThinking" not in by_id["claude-sonnet-4-5"]["compat"]
    for m in ALL_MODELS:
        if m["id"].startswith("gpt-5"):
            assert m["thinkingLevelMap"]["off"] is None
    assert by_id["gpt-5.2"]["thinkingLevelMap"]["xhigh"] == "xhigh"
    assert by_id["gpt-4o"]["reasoning"] is False


def test_fresh_copies() -> None:
    first = builtin_providers()
    first[0].models[0]["cost"]["input"] = 999
    assert builtin_providers()[0].models[0]["cost"]["input"] != 999


@pytest.mark.parametrize("name", ["catalog.json", "compat.json", "google.json"])
def test_catalog_models_are_built_as_before_and_share_nothing_with_the_file_cache(name: str) -> None:
    cached = {id(c) for c in containers(_load(name))}
    for raw, info in zip(_load(name)["providers"], catalog_providers(name), strict=True):
        assert not {id(c) for m in info.models for c in containers(m) if c is not m.get("compat")} & cached
        for m, got in zip(raw["models"], info.models, strict=True):
            want = {"id": m["id"], "name": m.get("name", m["id"]), "api": m.get("api", raw["api"]),
                    "provider": raw["id"], "baseUrl": m.get("baseUrl", raw["baseUrl"])}  # fmt: skip
            want.update({k: json_copy(v) for k, v in m.items() if k not in want})
            if raw.get("compat"):
                want["compat"] = {**raw["compat"], **(m.get("compat") or {})}
            assert repr(got) == repr(want)  # the keys in the same order too


def test_plugin_registers_providers() -> None:
    class Specs:
        @hookspec
        def register_providers(self, register, api):  # type: ignore[no-untyped-def]
            """spec"""

    import builtin_plugins.catalog as plugin

    pm = pluggy.PluginManager(PROJECT_NAME)
    pm.add_hookspecs(Specs)
    pm.register(plugin)
    got: list[ProviderInfo] = []
    pm.hook.register_providers(register=got.append, api=None)
    assert [p.id for p in got] == [
        "anthropic", "openai", "openrouter", "groq", "xai", "mistral", "cerebras", "deepseek",
        "ollama", "llama.cpp", "vllm", "lmstudio", "github-copilot", "openai-codex",
    ]
    assert got[0].oauth is not None and got[1].oauth is None  # the Anthropic (Claude Pro/Max) sign-in
