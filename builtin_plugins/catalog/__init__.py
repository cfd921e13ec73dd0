"""Built-in plugin: registers the curated Anthropic, OpenAI and OpenAI-compatible catalogs, with the
OAuth sign-ins of ``builtin_plugins.oauth.declarations`` (a login for Anthropic; the GitHub Copilot
and ChatGPT subscription providers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from atomic_host import hookimpl
from builtin_plugins.catalog.data import builtin_providers, compat_providers
from builtin_plugins.oauth.declarations import catalog_logins, subscription_providers


@hookimpl
def register_providers(register: Callable[[Any], None]) -> None:
    """Register every provider of ``catalog.json`` and ``compat.json`` (with its OAuth login, if it
    has one), then the subscription providers."""
    logins = catalog_logins()
    for provider in [*builtin_providers(), *compat_providers()]:
        provider.oauth = logins.get(provider.id)
        register(provider)
    for provider in subscription_providers():
        register(provider)
