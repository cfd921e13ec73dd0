"""The provider hooks of a model call: ``before_provider_request``, ``before_provider_headers`` and
``after_provider_response``, as the HTTP transport (``kit/llm/http.py`` ``drive``) calls them.

:func:`provider_hooks` gives ``StreamOptions.provider_hooks`` only while some plugin implements
one of them, so a host without such a plugin pays nothing per request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from atomic_host.contract.events import (
    AfterProviderResponseEvent,
    BeforeProviderHeadersEvent,
    BeforeProviderRequestEvent,
)

if TYPE_CHECKING:
    from atomic_host.plugins.dispatch import Dispatcher

HOOKS = ("before_provider_request", "before_provider_headers", "after_provider_response")


def provider_hooks(hooks: Dispatcher, model: dict[str, Any]) -> PluginProviderHooks | None:
    """The hooks for one call to ``model``; None when no plugin implements any of them."""
    if not any(hooks.has_impls(name) for name in HOOKS):
        return None
    return PluginProviderHooks(hooks, model)


class PluginProviderHooks:
    """Implements :class:`atomic_host.contract.providers.ProviderHooks` with the plugins' hooks
    (each through the dispatcher: a failing implementation is reported and skipped)."""

    def __init__(self, hooks: Dispatcher, model: dict[str, Any]) -> None:
        self._hooks = hooks
        self._model = model

    async def before_request(self, url: str, payload: dict[str, Any]) -> dict[str, Any]:
        if not self._hooks.has_impls("before_provider_request"):
            return payload
        event = BeforeProviderRequestEvent(payload, self._model, url)
        await self._hooks.acall("before_provider_request", event=event)
        return event.payload

    async def before_headers(self, url: str, headers: dict[str, str]) -> dict[str, str]:
        if not self._hooks.has_impls("before_provider_headers"):
            return headers
        event = BeforeProviderHeadersEvent(dict(headers), self._model, url)
        await self._hooks.acall("before_provider_headers", event=event)
        sent = event.headers if isinstance(event.headers, dict) else headers
        # None leaves a header out; anything but text cannot go on the wire
        return {k.lower(): v for k, v in sent.items() if isinstance(k, str) and isinstance(v, str)}

    async def after_response(
        self, url: str, status: int, headers: Mapping[str, str], elapsed_ms: float, attempt: int
    ) -> None:
        if not self._hooks.has_impls("after_provider_response"):
            return
        seen = {k.lower(): v for k, v in headers.items()}
        event = AfterProviderResponseEvent(status, seen, round(elapsed_ms, 3), self._model, url, attempt)
        await self._hooks.acall("after_provider_response", event=event)
