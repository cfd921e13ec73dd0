"""Built-in plugin: registers the curated Anthropic and OpenAI model catalogs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from atomic_host import hookimpl


@hookimpl
def register_providers(register: Callable[[Any], None]) -> None:
    """Register every provider of ``catalog.json``."""
    from builtin_plugins.catalog.data import builtin_providers

    for provider in builtin_providers():
        register(provider)
