"""``refresh_models``: re-read models.json and auth.json, then (when the network may be used) ask
the providers with a dynamic catalog (``ProviderInfo.refresh_models``) for their current models.

The built-in catalog is package data and is never fetched. A network refresh asks only providers
that declare ``refresh_models`` and have credentials (or need none), all at once, within one
deadline (``timeoutMs``, default 10 s). A catalog fetched less than :data:`FRESH_S` ago is reused
unless ``force``. What comes back:

- ``aborted``: the deadline passed before every provider answered; those still asking are
  cancelled and keep the catalog they had;
- ``errors``: ``[{provider, message}]`` for each provider whose fetch failed (it keeps its last
  good catalog) and for each problem reading models.json or auth.json (``provider``: the file).

So a model picker can tell an empty catalog (no models, no errors) from a failed refresh.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from atomic_host.contract.providers import CatalogRequest
from atomic_host.contract.tools import resolve

if TYPE_CHECKING:
    from atomic_host.contract.providers import ProviderInfo
    from atomic_host.core.models.registry import ModelRegistry

DEFAULT_TIMEOUT_MS = 10_000
FRESH_S = 300.0
"""A catalog fetched this recently is reused unless ``force``."""


async def refresh(
    registry: ModelRegistry, *, timeout_ms: int | None = None, force: bool = False, allow_network: bool = True
) -> dict[str, Any]:
    """Refresh the catalogs; returns ``{"aborted": bool, "errors": [{provider, message}]}``."""
    registry.reload()
    errors = [{"provider": _file_of(e), "message": e} for e in registry.errors]
    aborted = False
    if allow_network:
        now = time.monotonic()
        due = [
            info
            for info in registry.dynamic_providers()
            if (force or now - registry.fetched.get(info.id, (-FRESH_S, []))[0] >= FRESH_S)
            and (info.always_authenticated or registry.auth_status(info.id).get("configured"))
        ]
        tasks = {asyncio.ensure_future(_fetch(registry, info)): info.id for info in due}
        if tasks:
            timeout = (DEFAULT_TIMEOUT_MS if timeout_ms is None else max(0, timeout_ms)) / 1000
            done, pending = await asyncio.wait(tasks, timeout=timeout)
            for task in pending:
                task.cancel()
            aborted = bool(pending)
            for task in done:
                provider = tasks[task]
                exc = task.exception()
                if exc is not None:
                    errors.append({"provider": provider, "message": str(exc) or type(exc).__name__})
                else:
                    registry.fetched[provider] = (time.monotonic(), task.result())
            registry.reload()
    return {"aborted": aborted, "errors": errors}


async def _fetch(registry: ModelRegistry, info: ProviderInfo) -> list[dict[str, Any]]:
    fetch = resolve(info.refresh_models)
    request = CatalogRequest(info.id, info.base_url, registry.resolve_api_key(info.id), dict(info.headers))
    models = await fetch(request)
    if not isinstance(models, list) or not all(isinstance(m, dict) and isinstance(m.get("id"), str) for m in models):
        raise ValueError("refresh_models must return a list of model objects with a string id")
    return models


def _file_of(error: str) -> str:
    """The file a registry error is about (its message names it)."""
    return next((name for name in ("models.json", "auth.json") if name in error), "host")
