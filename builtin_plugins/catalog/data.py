"""The built-in model catalog, shipped as package data (JSON files beside this module).

``catalog.json`` (Anthropic, OpenAI) is registered by this plugin; the catalogs of the other wire
APIs (``google.json``) by the providers plugin, next to their adapters. Model lists, capabilities and
limits are curated; costs are generated from genai-prices by ``scripts/update_catalog_prices.py``
(build time only: the host never imports genai-prices). Each file's ``_provenance`` says where every
number comes from; nothing is fetched at runtime.

A provider entry declares what the host knows of it: ``envKeys`` (the key variables, in order),
``secretEnv`` (other credential variables, masked only), ``preferredModels`` (the default model
when the user picks none). ``keyOnlyProviders`` of ``catalog.json`` are well-known providers
without a model list here: id, name and key variables, for a ``models.json`` entry of that id
(registered by the ``builtin_plugins.catalog.known_keys`` plugin).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from atomic_host.contract.providers import ProviderInfo
from atomic_host.kit.copies import json_copy

PLUGIN_NAME = "builtin_plugins.catalog"
_SCALARS = frozenset({str, int, float, bool, type(None)})
"""Values a copy shares (immutable)."""


@cache
def _load(name: str = "catalog.json") -> dict[str, Any]:
    text = (Path(__file__).parent / name).read_text("utf-8")
    return json.loads(text)


def provenance(name: str = "catalog.json") -> str:
    """Where a catalog file's numbers come from (its ``_provenance`` summary, prices and limits text)."""
    prov = _load(name).get("_provenance", "")
    if isinstance(prov, dict):
        return " ".join(str(prov[key]) for key in ("summary", "prices", "limits") if key in prov)
    return str(prov)


def catalog_providers(name: str, plugin: str = PLUGIN_NAME) -> list[ProviderInfo]:
    """Fresh ``ProviderInfo`` objects (full Model dicts) for every provider of the catalog file ``name``."""
    out: list[ProviderInfo] = []
    for raw in _load(name)["providers"]:
        models = []
        provider_compat = raw.get("compat")
        for m in raw["models"]:
            model = {
                "id": m["id"],
                "name": m.get("name", m["id"]),
                "api": m.get("api", raw["api"]),
                "provider": raw["id"],
                "baseUrl": m.get("baseUrl", raw["baseUrl"]),
            }
            for key, value in m.items():  # the rest, copied (scalars are shared: most of a model's values)
                if key not in model:
                    model[key] = value if type(value) in _SCALARS else json_copy(value)
            if provider_compat:  # provider compat under the model's own
                model["compat"] = {**provider_compat, **(m.get("compat") or {})}
            models.append(model)
        out.append(
            ProviderInfo(
                id=raw["id"],
                name=raw["name"],
                api=raw["api"],
                base_url=raw["baseUrl"],
                env_keys=list(raw.get("envKeys", [])),
                models=models,
                headers=dict(raw.get("headers", {})),
                compat=json_copy(provider_compat or {}),
                always_authenticated=bool(raw.get("keyless", False)),
                plugin=plugin,
                secret_env=list(raw.get("secretEnv", [])),
                preferred_models=list(raw.get("preferredModels", [])),
            )
        )
    return out


def key_only_providers(plugin: str = PLUGIN_NAME) -> list[ProviderInfo]:
    """``ProviderInfo`` objects without models for the ``keyOnlyProviders`` of ``catalog.json``
    that ``compat.json`` has no full entry for (a full entry declares the same keys, and a later
    key-only registration would replace it and drop its models)."""
    full = {raw["id"] for raw in _load("compat.json")["providers"]}
    return [
        ProviderInfo(id=raw["id"], name=raw["name"], api="", env_keys=list(raw["envKeys"]), plugin=plugin)
        for raw in _load("catalog.json").get("keyOnlyProviders", [])
        if raw["id"] not in full
    ]


def builtin_providers() -> list[ProviderInfo]:
    """Fresh ``ProviderInfo`` objects for every provider of ``catalog.json``."""
    return catalog_providers("catalog.json")


def compat_providers() -> list[ProviderInfo]:
    """Fresh ``ProviderInfo`` objects for the OpenAI-compatible providers of ``compat.json``
    (hosted ones with models; keyless local servers whose models come from models.json)."""
    return catalog_providers("compat.json")
