"""Parsing and resolving provider/model[:level] references."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from atomic_host.core.models.refs import parse_model_ref, resolve_model
from atomic_host.core.models.registry import ModelRegistry
from builtin_plugins.catalog.data import builtin_providers


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("anthropic/claude-sonnet-4-5:high", ("anthropic", "claude-sonnet-4-5", "high")),
        ("anthropic/claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5", None)),
        ("claude-sonnet-4-5:max", (None, "claude-sonnet-4-5", "max")),
        ("gpt-5", (None, "gpt-5", None)),
        ("openrouter/meta/llama:free", ("openrouter", "meta/llama:free", None)),
        ("openrouter/meta/llama:free:off", ("openrouter", "meta/llama:free", "off")),
        ("ollama/qwen2.5-coder:7b", ("ollama", "qwen2.5-coder:7b", None)),
        ("  gpt-4o  ", (None, "gpt-4o", None)),
        ("/odd", (None, "/odd", None)),
        (":high", (None, ":high", None)),
    ],
)
def test_parse(ref: str, expected: tuple) -> None:
    assert parse_model_ref(ref) == expected


@pytest.fixture
def registry(tmp_path: Path) -> ModelRegistry:
    (tmp_path / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "openrouter": {
                        "baseUrl": "http://127.0.0.1:1/v1",
                        "api": "openai-completions",
                        "apiKey": "k",
                        "models": [{"id": "meta/llama:free"}, {"id": "gpt-5"}],
                    },
                    "proxy": {
                        "baseUrl": "http://127.0.0.1:2/v1",
                        "api": "openai-completions",
                        "models": [{"id": "claude-haiku-4-5"}],
                    },
                }
            }
        )
    )
    return ModelRegistry(tmp_path, builtin_providers(), {}, env={"ANTHROPIC_API_KEY": "k"})


def _key(model: dict | None) -> str | None:
    return f"{model['provider']}/{model['id']}" if model else None


@pytest.mark.parametrize(
    ("ref", "provider", "expected"),
    [
        ("anthropic/claude-sonnet-4-5:high", None, "anthropic/claude-sonnet-4-5"),
        ("openrouter/meta/llama:free", None, "openrouter/meta/llama:free"),
        ("meta/llama:free", None, "openrouter/meta/llama:free"),
        ("meta/llama:free", "openrouter", "openrouter/meta/llama:free"),
        ("gpt-5", None, "openrouter/gpt-5"),  # available beats catalog order
        ("gpt-5", "openai", "openai/gpt-5"),
        ("claude-haiku-4-5", None, "anthropic/claude-haiku-4-5"),
        ("claude-haiku-4-5", "proxy", "proxy/claude-haiku-4-5"),
        ("o3:high", None, "openai/o3"),  # not available, still found
        ("anthropic/gpt-5", None, None),  # a known provider does not fall back to other providers
        ("nope", None, None),
        ("gpt-5", "nope", None),
    ],
)
def test_resolve(registry: ModelRegistry, ref: str, provider: str | None, expected: str | None) -> None:
    assert _key(resolve_model(registry, ref, provider)) == expected
