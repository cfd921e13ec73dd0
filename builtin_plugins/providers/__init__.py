"""Built-in provider plugin: the anthropic-messages, openai-completions, openai-responses,
google-generative-ai and faux wire APIs, plus the ``faux`` and ``google`` provider catalogs.

Stream functions are registered as ``"module:function"`` strings so httpx loads on first use.
``faux`` runs in process: its API needs no HTTP client and its provider is ``scripted`` (never
the default model).
The anthropic/openai model catalogs are registered by ``builtin_plugins.catalog``; the Gemini one
(``builtin_plugins/catalog/google.json``) comes with its adapter, from this plugin.
"""

from __future__ import annotations

import os
from typing import Any

from atomic_host import hookimpl
from atomic_host.contract.providers import ApiImpl, ProviderInfo
from builtin_plugins.catalog.data import catalog_providers

_PKG = "builtin_plugins.providers"
APIS = {
    "anthropic-messages": f"{_PKG}.anthropic:stream",
    "openai-completions": f"{_PKG}.openai_completions:stream",
    "openai-responses": f"{_PKG}.openai_responses:stream",
    "google-generative-ai": f"{_PKG}.google:stream",
    "faux": f"{_PKG}.faux:stream",
}


def faux_model() -> dict[str, Any]:
    """The faux-1 model dict (a copy)."""
    return {
        "id": "faux-1",
        "name": "Faux 1",
        "api": "faux",
        "provider": "faux",
        "baseUrl": "http://localhost:0",
        "reasoning": True,
        "input": ["text", "image"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 128000,
        "maxTokens": 16384,
    }


def faux_enabled(api: Any) -> bool:
    """The scripted provider counts as configured only when asked for: a script file in
    ``ATOMIC_FAUX_SCRIPT``, or ``--provider faux`` / ``--model faux/…``. Otherwise a real user
    would find it in ``get_available_models`` and ``cycle_model``."""
    if api is None or os.environ.get("ATOMIC_FAUX_SCRIPT"):
        return True
    options = api.options
    return options.provider == "faux" or (options.model or "").startswith("faux/")


@hookimpl
def register_providers(register: Any, api: Any) -> None:
    for name, target in APIS.items():
        register(ApiImpl(api=name, stream=target, needs_http=name != "faux"))
    for provider in catalog_providers("google.json", plugin=_PKG):
        register(provider)
    register(
        ProviderInfo(
            id="faux",
            name="Faux (scripted)",
            api="faux",
            base_url="http://localhost:0",
            models=[faux_model()],
            always_authenticated=faux_enabled(api),
            background_summaries=False,
            scripted=True,
        )
    )
