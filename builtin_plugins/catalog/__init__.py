"""Built-in plugin: registers the curated Anthropic and OpenAI model catalogs, and the key
variables of well-known providers it has no models for."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from atomic_host import hookimpl


@hookimpl
def register_providers(register: Callable[[Any], None]) -> None:
    """Register every provider of ``catalog.json``, key-only ones last."""
    from builtin_plugins.catalog.data import builtin_providers, key_only_providers

    for provider in [*builtin_providers(), *key_only_providers()]:
        register(provider)
