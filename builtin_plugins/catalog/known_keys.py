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


@hookimpl
def register_providers(register: Callable[[Any], None]) -> None:
    """Register every key-only provider of ``catalog.json``."""
    from builtin_plugins.catalog.data import key_only_providers

    for provider in key_only_providers(plugin=__name__):
        register(provider)
