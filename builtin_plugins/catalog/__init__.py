"""Built-in plugin: registers the curated Anthropic and OpenAI model catalogs, then the OAuth
sign-ins (``builtin_plugins.oauth.declarations``: a login for Anthropic, the GitHub Copilot and
ChatGPT subscription providers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from atomic_host import hookimpl


@hookimpl
def register_providers(register: Callable[[Any], None]) -> None:
    """Register every provider of ``catalog.json``, then the OAuth declarations."""
    from builtin_plugins.catalog.data import builtin_providers
    from builtin_plugins.oauth.declarations import oauth_providers

    for provider in [*builtin_providers(), *oauth_providers()]:
        register(provider)
