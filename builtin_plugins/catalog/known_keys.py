"""Built-in plugin: the key variables of well-known providers the catalog has no models for
(``keyOnlyProviders`` of ``catalog.json``: Groq, xAI, OpenRouter, …).

Each is a ``ProviderInfo`` without models, so a ``models.json`` provider of the same id finds its
key in the environment (``GROQ_API_KEY``, ``HF_TOKEN``, …) and the host masks it. Disabling this
plugin leaves such providers with the ``apiKey`` of their ``models.json`` entry only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from atomic_host import hookimpl
from builtin_plugins.catalog.data import key_only_providers
from builtin_plugins.oauth.declarations import SUBSCRIPTION_PROVIDER_IDS


@hookimpl
def register_providers(register: Callable[[Any], None]) -> None:
    """Register every key-only provider of ``catalog.json`` the subscription declarations
    (``builtin_plugins.oauth.declarations``, registered with models and a login) do not cover."""
    for provider in key_only_providers(plugin=__name__):
        if provider.id not in SUBSCRIPTION_PROVIDER_IDS:
            register(provider)
