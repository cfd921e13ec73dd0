"""``models.json``: custom providers and models, built-in reroutes and ``modelOverrides``.

Shape (providers.md §2)::

    {"providers": {"<id>": {"name"?, "baseUrl"?, "api"?, "apiKey"?, "headers"?, "authHeader"?,
                            "compat"?, "models"?: [{"id", ...}], "modelOverrides"?: {"<id>": {...}}}}}

Problems are collected as text, never raised: a broken file is ignored as a whole, a bad provider or
model is skipped and the rest is used.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from atomic_host.contract.records import field, record
from atomic_host.core.models.auth_store import read_config_text
from atomic_host.kit.copies import json_copy

MODEL_DEFAULTS: dict[str, Any] = {"reasoning": False, "input": ["text"], "contextWindow": 128000,
                                  "maxTokens": 16384}
ZERO_COST = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
OVERRIDABLE = frozenset({"name", "reasoning", "thinkingLevelMap", "input", "cost", "contextWindow",
                         "maxTokens", "samplingParams", "headers", "compat"})
_MERGED = frozenset({"headers", "compat", "samplingParams", "thinkingLevelMap"})
_KEY_ORDER = ("id", "name", "api", "provider", "baseUrl", "reasoning", "thinkingLevelMap", "input", "cost",
              "contextWindow", "maxTokens", "samplingParams", "headers", "compat")
_ORDERED = frozenset(_KEY_ORDER)
_SCALARS = frozenset({str, int, float, bool, type(None)})
"""Values shared rather than copied (immutable)."""


@record
class ProviderConfig:
    """One validated ``providers.<id>`` entry of models.json."""

    id: str
    name: str | None = None
    base_url: str | None = None
    api: str | None = None
    api_key: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    auth_header: bool = False
    compat: dict[str, Any] = field(default_factory=dict)
    models: list[dict[str, Any]] = field(default_factory=list)
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)


def load_models_json(path: Path) -> tuple[dict[str, ProviderConfig], list[str]]:
    """Parse ``path`` into provider configs (file order) plus error texts; a missing file is no error."""
    try:
        text = read_config_text(path)
    except FileNotFoundError:
        return {}, []
    except OSError as exc:
        return {}, [f"Cannot read {path}: {exc}"]
    if not text.strip():
        return {}, []
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return {}, [f"Invalid JSON in {path}: {exc}"]
    if not isinstance(data, dict) or not isinstance(data.get("providers", {}), dict):
        return {}, [f"{path}: expected {{\"providers\": {{...}}}}"]
    configs: dict[str, ProviderConfig] = {}
    errors: list[str] = []
    for pid, raw in data.get("providers", {}).items():
        cfg = _provider_config(pid, raw, errors)
        if cfg is not None:
            configs[pid] = cfg
    return configs, [f"models.json: {e}" for e in errors]


def _provider_config(pid: str, raw: Any, errors: list[str]) -> ProviderConfig | None:
    if not isinstance(raw, dict):
        errors.append(f"provider {pid!r} must be an object")
        return None
    cfg = ProviderConfig(id=pid)
    for key, attr in (("name", "name"), ("baseUrl", "base_url"), ("api", "api"), ("apiKey", "api_key")):
        value = raw.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not value:
            errors.append(f"provider {pid!r}: {key} must be a non-empty string")
            return None
        setattr(cfg, attr, value)
    for key, attr in (("headers", "headers"), ("compat", "compat"), ("modelOverrides", "overrides")):
        value = raw.get(key, {})
        if not isinstance(value, dict):
            errors.append(f"provider {pid!r}: {key} must be an object")
            return None
        setattr(cfg, attr, json_copy(value))
    if not all(isinstance(v, str) for v in cfg.headers.values()):
        errors.append(f"provider {pid!r}: header values must be strings")
        return None
    cfg.auth_header = bool(raw.get("authHeader", False))
    models = raw.get("models", [])
    if not isinstance(models, list):
        errors.append(f"provider {pid!r}: models must be a list")
        return None
    for i, m in enumerate(models):
        problem = _model_problem(m)
        if problem:
            errors.append(f"provider {pid!r}: models[{i}] {problem}; skipped")
        else:
            cfg.models.append(json_copy(m))
    return cfg


def _model_problem(m: Any) -> str | None:
    if not isinstance(m, dict):
        return "must be an object"
    if not isinstance(m.get("id"), str) or not m["id"]:
        return "needs a string id"
    for key in ("contextWindow", "maxTokens"):
        if key in m and (not isinstance(m[key], int) or isinstance(m[key], bool) or m[key] <= 0):
            return f"{key} must be a positive integer"
    if "input" in m and (not isinstance(m["input"], list) or not set(m["input"]) <= {"text", "image"}):
        return 'input must be a list of "text"/"image"'
    if "cost" in m and not isinstance(m["cost"], dict):
        return "cost must be an object"
    for key in ("headers", "compat", "thinkingLevelMap", "samplingParams"):
        if key in m and not isinstance(m[key], dict):
            return f"{key} must be an object"
    return None


def normalize_model(raw: dict[str, Any], provider: str, api: str, base_url: str,
                    compat: dict[str, Any] | None = None) -> dict[str, Any]:
    """A full Model dict: defaults filled in, ``compat`` = provider compat under model compat; the
    keys in the protocol's order (``_KEY_ORDER``), then the others in ``raw``'s. Written out key by
    key, copying each of ``raw``'s values once (scalars are shared): every start normalizes each
    model of the catalog, some sixty, and a loop over ``_KEY_ORDER`` tested every key against
    every case."""
    scalars = _SCALARS
    model: dict[str, Any] = {}
    value = raw["id"]
    model["id"] = value if type(value) in scalars else _copy_container(value)
    value = raw["name"] if "name" in raw else raw["id"]
    model["name"] = value if type(value) in scalars else _copy_container(value)
    if "api" in raw:
        value = raw["api"]
        model["api"] = value if type(value) in scalars else _copy_container(value)
    else:
        model["api"] = api
    model["provider"] = provider
    if "baseUrl" in raw:
        value = raw["baseUrl"]
        model["baseUrl"] = value if type(value) in scalars else _copy_container(value)
    else:
        model["baseUrl"] = base_url
    for key in ("reasoning", "thinkingLevelMap", "input"):
        if key in raw:
            value = raw[key]
            model[key] = value if type(value) in scalars else _copy_container(value)
        elif key in MODEL_DEFAULTS:
            model[key] = json_copy(MODEL_DEFAULTS[key])
    cost = raw.get("cost")
    # merged over the zero costs; a flat table (no tiers) needs no copy of its own first
    model["cost"] = {**ZERO_COST, **((cost if _is_flat(cost) else json_copy(cost)) if cost else {})}
    for key in ("contextWindow", "maxTokens", "samplingParams", "headers"):
        if key in raw:
            value = raw[key]
            model[key] = value if type(value) in scalars else _copy_container(value)
        elif key in MODEL_DEFAULTS:
            model[key] = json_copy(MODEL_DEFAULTS[key])
    if compat or "compat" in raw:
        own = raw.get("compat")
        model["compat"] = {**(compat or {}), **((own if _is_flat(own) else json_copy(own)) if own else {})}
    if raw.keys() - _ORDERED:  # keys of the protocol's order only, most often: no loop over them
        for key, value in raw.items():
            if key not in _ORDERED:
                model[key] = value if type(value) in scalars else _copy_container(value)
    return model


def _copy_container(value: Any) -> Any:
    """``json_copy(value)``; a flat dict or list (``input``, ``thinkingLevelMap``, most ``compat``)
    by a shallow copy, after a check that runs in C: a Python loop over its items costs several
    times more."""
    if _is_flat(value):
        return dict(value)
    if type(value) is list and _SCALARS.issuperset(map(type, value)):
        return list(value)
    return json_copy(value)


def _is_flat(value: Any) -> bool:
    """``value`` is a dict of scalars only (so a shallow copy of it is a deep one)."""
    return type(value) is dict and _SCALARS.issuperset(map(type, value.values()))


def apply_override(model: dict[str, Any], patch: dict[str, Any]) -> None:
    """Patch ``model`` in place with the allowed override fields (cost scalars partial, tiers whole)."""
    for key, value in patch.items():
        if key not in OVERRIDABLE:
            continue
        if key == "cost" and isinstance(value, dict):
            model["cost"] = {**model.get("cost", {}), **json_copy(value)}
        elif key in _MERGED and isinstance(value, dict):
            model[key] = {**(model.get(key) or {}), **json_copy(value)}
        else:
            model[key] = json_copy(value)


def upsert(models: list[dict[str, Any]], model: dict[str, Any]) -> None:
    """Replace the model with the same id, else append."""
    for i, existing in enumerate(models):
        if existing["id"] == model["id"]:
            models[i] = model
            return
    models.append(model)


def upsert_all(models: list[dict[str, Any]], new: Iterable[dict[str, Any]]) -> None:
    """:func:`upsert` each of ``new``, in time linear in both lists (a fetched catalog may be long)."""
    index = {m["id"]: i for i, m in enumerate(models)}
    for model in new:
        i = index.get(model["id"])
        if i is None:
            index[model["id"]] = len(models)
            models.append(model)
        else:
            models[i] = model
