"""The built-in model catalog, shipped as package data (``catalog.json`` beside this module).

The JSON is hand-curated (see its ``_provenance``); it is never fetched at runtime.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

from atomic_host.contract.providers import ProviderInfo

PLUGIN_NAME = "builtin_plugins.catalog"


@cache
def _load() -> dict[str, Any]:
    text = (Path(__file__).parent / "catalog.json").read_text("utf-8")
    return json.loads(text)


def provenance() -> str:
    """Where the catalog's numbers come from."""
    return str(_load().get("_provenance", ""))


def builtin_providers() -> list[ProviderInfo]:
    """Fresh ``ProviderInfo`` objects (full Model dicts) for every catalog provider."""
    out: list[ProviderInfo] = []
    for raw in _load()["providers"]:
        models = []
        for m in raw["models"]:
            model = {"id": m["id"], "name": m.get("name", m["id"]), "api": m.get("api", raw["api"]),
                     "provider": raw["id"], "baseUrl": m.get("baseUrl", raw["baseUrl"])}
            model.update({k: copy.deepcopy(v) for k, v in m.items() if k not in model})
            models.append(model)
        out.append(ProviderInfo(id=raw["id"], name=raw["name"], api=raw["api"], base_url=raw["baseUrl"],
                                env_keys=list(raw.get("envKeys", [])), models=models,
                                headers=dict(raw.get("headers", {})), plugin=PLUGIN_NAME))
    return out
