"""``normalize_model`` (models_json.py) against the loop it replaced, kept here as the reference: the
same keys in the same order, equal values, and no container shared with the input (a flat table
is copied shallowly, a nested one deeply); on generated model dicts and on the whole catalog."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from model_helpers import containers

from atomic_host.core.models.models_json import MODEL_DEFAULTS, ZERO_COST, normalize_model
from atomic_host.kit.copies import json_copy
from builtin_plugins.catalog.data import builtin_providers, compat_providers

_KEY_ORDER = ("id", "name", "api", "provider", "baseUrl", "reasoning", "thinkingLevelMap", "input", "cost",
              "contextWindow", "maxTokens", "samplingParams", "headers", "compat")  # fmt: skip
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _copy(value: Any) -> Any:
    return value if type(value) in _SCALARS else json_copy(value)


def reference(raw: dict[str, Any], provider: str, api: str, base_url: str, compat: dict[str, Any] | None = None) -> Any:
    model: dict[str, Any] = {}
    fallbacks = {"name": _copy(raw["id"]), "api": api, "baseUrl": base_url}
    for key in _KEY_ORDER:
        if key == "provider":
            model[key] = provider
        elif key == "cost":
            cost = raw.get("cost")
            model[key] = {**ZERO_COST, **(json_copy(cost) if cost else {})}
        elif key == "compat":
            if compat or "compat" in raw:
                own = raw.get("compat")
                model[key] = {**(compat or {}), **(json_copy(own) if own else {})}
        elif key in raw:
            model[key] = _copy(raw[key])
        elif key in fallbacks:
            model[key] = fallbacks[key]
        elif key in MODEL_DEFAULTS:
            model[key] = json_copy(MODEL_DEFAULTS[key])
    for key, value in raw.items():
        if key not in _KEY_ORDER:
            model[key] = _copy(value)
    return model


scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8,
)
flat = st.dictionaries(st.sampled_from(["input", "output", "cacheRead", "x"]), scalars, max_size=4)
PLAIN = ("name", "api", "baseUrl", "reasoning", "thinkingLevelMap", "input", "contextWindow", "maxTokens",
         "samplingParams", "headers", "provider")  # fmt: skip
raw_models = st.fixed_dictionaries(
    {"id": st.text(min_size=1, max_size=5)},
    optional={
        **dict.fromkeys(PLAIN, values),
        "cost": flat | values.filter(lambda v: not v or isinstance(v, dict)),
        "compat": flat | values.filter(lambda v: not v or isinstance(v, dict)),
        "extra": values,
        "other": values,
    },
)


def _same(raw: dict[str, Any], *args: Any) -> None:
    got, want = normalize_model(raw, *args), reference(raw, *args)
    assert list(got) == list(want)
    assert repr(got) == repr(want)
    assert not {id(c) for c in containers(raw)} & {id(c) for c in containers(got)}


@given(raw_models, st.none() | flat)
def test_normalize_model_matches_the_reference(raw: dict[str, Any], compat: dict[str, Any] | None) -> None:
    _same(raw, "prov", "some-api", "https://base", compat)


def test_the_whole_catalog_normalizes_as_before() -> None:
    for info in [*builtin_providers(), *compat_providers()]:
        for raw in info.models:
            _same(raw, info.id, info.api, info.base_url, info.compat or None)
