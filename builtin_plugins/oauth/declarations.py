"""Which providers sign in with OAuth. ``builtin_plugins.catalog`` puts :func:`catalog_logins` on its
providers (Anthropic) and registers :func:`subscription_providers` (GitHub Copilot, ChatGPT); this
plugin registers :func:`codex_api`, the wire API the ChatGPT models use.

Stdlib and contract only: this module loads at startup; the flows it names load on first use.
Model ids, limits and headers of the two subscription catalogs are the ones pi
(@mariozechner/pi-ai 0.73.1, ``dist/models.generated.js``) ships, trimmed to a few per family;
subscription use costs nothing per token, so costs are zero.
"""

from __future__ import annotations

from typing import Any

from atomic_host.contract.providers import ApiImpl, OAuthLogin, ProviderInfo

_PKG = "builtin_plugins.oauth"
COPILOT_BASE_URL = "https://api.individual.githubcopilot.com"
COPILOT_HEADERS = {
    "User-Agent": "GitHubCopilotChat/0.35.0",
    "Editor-Version": "vscode/1.107.0",
    "Editor-Plugin-Version": "copilot-chat/0.35.0",
    "Copilot-Integration-Id": "vscode-chat",
}
CODEX_BASE_URL = "https://chatgpt.com/backend-api/codex"
CODEX_API = "openai-codex-responses"
"""The Codex backend's Responses dialect (:mod:`builtin_plugins.providers.openai_codex_responses`,
registered by this plugin: :func:`codex_api`)."""
SUBSCRIPTION_PROVIDER_IDS = frozenset({"github-copilot", "openai-codex"})
"""The providers :func:`subscription_providers` defines (the key-only list must not replace them)."""
ZERO_COST = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}


def _model(provider: str, model_id: str, name: str, api: str, base_url: str, context: int, max_tokens: int,
           **extra: Any) -> dict[str, Any]:
    return {"id": model_id, "name": name, "api": api, "provider": provider, "baseUrl": base_url,
            "reasoning": True, "input": ["text", "image"], "cost": dict(ZERO_COST), "contextWindow": context,
            "maxTokens": max_tokens, **extra}


def _copilot_models() -> list[dict[str, Any]]:
    rows = [
        ("claude-sonnet-4.5", "Claude Sonnet 4.5", "anthropic-messages", 144000, 32000,
         {"compat": {"supportsEagerToolInputStreaming": False}}),
        ("claude-haiku-4.5", "Claude Haiku 4.5", "anthropic-messages", 144000, 32000,
         {"compat": {"supportsEagerToolInputStreaming": False}}),
        ("gpt-5", "GPT-5", "openai-responses", 128000, 128000, {}),
        ("gpt-5-mini", "GPT-5-mini", "openai-responses", 264000, 64000, {}),
        ("gpt-4.1", "GPT-4.1", "openai-completions", 128000, 16384, {"reasoning": False}),
        ("gemini-2.5-pro", "Gemini 2.5 Pro", "openai-completions", 128000, 64000, {}),
    ]
    return [_model("github-copilot", mid, name, api, COPILOT_BASE_URL, ctx, out,
                   headers=dict(COPILOT_HEADERS), **extra) for mid, name, api, ctx, out, extra in rows]


def copilot_model_ids() -> list[str]:
    """Ids of the GitHub Copilot catalog models (each is enabled for the account after a login)."""
    return [model["id"] for model in _copilot_models()]


def _codex_models() -> list[dict[str, Any]]:
    rows = [("gpt-5.2", "GPT-5.2"), ("gpt-5.2-codex", "GPT-5.2 Codex"), ("gpt-5.1-codex-mini", "GPT-5.1 Codex Mini")]
    return [_model("openai-codex", mid, name, CODEX_API, CODEX_BASE_URL, 272000, 128000)
            for mid, name in rows]


def catalog_logins() -> dict[str, OAuthLogin]:
    """Logins for providers of the curated catalog, by provider id."""
    return {
        "anthropic": OAuthLogin(name="Anthropic (Claude Pro/Max)", flow=f"{_PKG}.anthropic:FLOW",
                                uses_callback_server=True),
    }


def codex_api() -> ApiImpl:
    """The ``openai-codex-responses`` wire API the ChatGPT models use (registered by this plugin)."""
    return ApiImpl(api=CODEX_API, stream="builtin_plugins.providers.openai_codex_responses:stream")


def subscription_providers() -> list[ProviderInfo]:
    """Fresh GitHub Copilot and ChatGPT providers, each with its login."""
    return [
        ProviderInfo(
            id="github-copilot", name="GitHub Copilot", api="openai-completions", base_url=COPILOT_BASE_URL,
            env_keys=["COPILOT_GITHUB_TOKEN"], models=_copilot_models(),
            oauth=OAuthLogin(name="GitHub Copilot", flow=f"{_PKG}.github_copilot:FLOW"),
        ),
        ProviderInfo(
            id="openai-codex", name="ChatGPT (Codex subscription)", api=CODEX_API, base_url=CODEX_BASE_URL,
            models=_codex_models(),
            oauth=OAuthLogin(name="ChatGPT Plus/Pro (Codex Subscription)", flow=f"{_PKG}.openai_codex:FLOW",
                             uses_callback_server=True),
        ),
    ]
