"""Built-in plugin: registers the curated Anthropic, OpenAI and OpenAI-compatible catalogs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from atomic_host import hookimpl


@hookimpl
def register_providers(register: Callable[[Any], None]) -> None:
    """Register every provider of ``catalog.json`` and ``compat.json``."""
    from builtin_plugins.catalog.data import builtin_providers, compat_providers

    for provider in [*builtin_providers(), *compat_providers()]:
        register(provider)
