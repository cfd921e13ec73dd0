"""Built-in OAuth sign-in for subscription plans: GitHub Copilot (device code), ChatGPT (PKCE with a
localhost callback) and Anthropic Claude Pro/Max (PKCE, callback or pasted code).

Only :mod:`builtin_plugins.oauth.declarations` (stdlib and the contract) is imported at startup: it
declares which providers have a login and names each flow as a ``"module:attribute"`` string. The
flow modules, and httpx with them, load when a login or a token refresh runs.

As a plugin it registers one thing: the ``openai-codex-responses`` wire API of the ChatGPT models
(the providers themselves come with the catalog, :mod:`builtin_plugins.catalog`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from atomic_host import hookimpl
from builtin_plugins.oauth.declarations import codex_api


@hookimpl
def register_providers(register: Callable[[Any], None]) -> None:
    """Register the Codex backend's wire API (its stream function loads on first use)."""
    register(codex_api())
