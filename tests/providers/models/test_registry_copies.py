"""The registry hands out copies: nothing a caller or a plugin does to a returned model changes the
registry's next answer, and :func:`json_copy` equals ``copy.deepcopy`` on model-shaped data."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from registry_outputs import MODELS_JSON

from atomic_host.core.models.refs import resolve_model
from atomic_host.core.models.registry import ModelRegistry
from atomic_host.kit.copies import json_copy
from atomic_host.testing import start_host
from builtin_plugins.catalog.data import builtin_providers, compat_providers

ENV = {"ANTHROPIC_API_KEY": "sk-ant-test", "OPENAI_API_KEY": "sk-oai-test", "LOCAL_HEADER": "hdr"}
REFS = ["local/qwen", "claude-sonnet-4-5", "extra/with-slash", "anthropic/claude-sonnet-4-5:high", "nope/x", "qwen"]

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    | st.tuples(inner, inner),  # not JSON: handed to copy.deepcopy
    max_leaves=25,
)


def _containers(value: Any) -> list[Any]:
    """Every dict and list inside ``value`` (itself included)."""
    out: list[Any] = []
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            out.append(node)
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            if isinstance(node, list):
                out.append(node)
            stack.extend(node)
    return out


@given(json_values)
def test_json_copy_equals_deepcopy_and_shares_no_container(value: Any) -> None:
    copied = json_copy(value)
    assert copied == copy.deepcopy(value)
    assert repr(copied) == repr(copy.deepcopy(value))  # same types and key order too
    originals = {id(c) for c in _containers(value)}
    assert not originals & {id(c) for c in _containers(copied)}


def _registry(tmp_path: Path) -> ModelRegistry:
    (tmp_path / "models.json").write_text(json.dumps(MODELS_JSON))
    return ModelRegistry(tmp_path, [*builtin_providers(), *compat_providers()], {}, env=ENV)


def _answers(reg: ModelRegistry) -> str:
    """Everything the registry says about models, as one JSON text."""
    found = [reg.find(m["provider"], m["id"]) for m in reg.all_models()]
    refs = [resolve_model(reg, ref) for ref in REFS] + [resolve_model(reg, "extra/with-slash", "local")]
    return json.dumps([reg.all_models(), reg.available(), found, reg.default_model(), refs])


def _handed_out(reg: ModelRegistry) -> list[Any]:
    return [reg.all_models(), reg.available(), reg.find("local", "qwen"), reg.find("anthropic", "claude-sonnet-4-5"),
            reg.default_model(), *(resolve_model(reg, ref) for ref in REFS)]


def _mutate(node: Any, choices: list[int]) -> None:
    """Change ``node`` in place along a path the draws pick: set, delete, append, clear."""
    for i, choice in enumerate(choices):
        if isinstance(node, dict) and node:
            key = sorted(node)[choice % len(node)]
            child = node[key]
            if isinstance(child, dict | list) and i < len(choices) - 1:
                node = child
                continue
            if choice % 3 == 0:
                del node[key]
            else:
                node[key] = {"mutated": choice}
            return
        if isinstance(node, list) and node:
            child = node[choice % len(node)]
            if isinstance(child, dict | list) and i < len(choices) - 1:
                node = child
                continue
            node.append("mutated") if choice % 2 else node.clear()
            return
    if isinstance(node, dict | list):
        node.clear()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.integers(0, 50), min_size=1, max_size=6), min_size=1, max_size=8))
def test_mutating_returned_models_never_changes_the_next_answer(tmp_path: Path, paths: list[list[int]]) -> None:
    reg = _registry(tmp_path)
    before = _answers(reg)
    handed = _handed_out(reg)
    for choices in paths:
        _mutate(handed[choices[0] % len(handed)], choices[1:] or [0])
    assert _answers(reg) == before


def test_iter_models_is_what_the_copies_are_made_of(tmp_path: Path) -> None:
    reg = _registry(tmp_path)
    assert list(reg.iter_models()) == reg.all_models()
    assert list(reg.iter_models(available=True)) == reg.available()
    assert all(a is not b for a, b in zip(reg.iter_models(), reg.all_models(), strict=True))
    assert reg.errors  # the scenario's broken provider is reported, the rest is used
    assert reg.find("local", "qwen")["name"] == "qwen again (replaces the first)"  # type: ignore[index]


MUTATE_ON_SELECT = """
from atomic_host import hookimpl

@hookimpl
def model_select(event, api):
    # A plugin that changes what it is handed: nested values, top-level keys, both models.
    for model in (event.model, event.previous_model):
        if model:
            model["name"] = "plugin was here"
            model.setdefault("compat", {})["plugin"] = True
            model["cost"]["input"] = 12345
            model["input"].append("audio")
"""


async def test_a_plugin_mutating_the_selected_model_changes_no_answer(tmp_path: Path) -> None:
    ext = tmp_path / "mutate_ext.py"
    ext.write_text(MUTATE_ON_SELECT)
    async with start_host("-e", str(ext), env=ENV) as host:
        (host.agent_dir / "models.json").write_text(json.dumps(MODELS_JSON))
        await host.client.call("refresh_models")
        first = await host.client.call("get_available_models")
        chosen = await host.client.call("set_model", provider="local", modelId="qwen")
        cycled = await host.client.call("cycle_model")
        await host.client.call("cycle_model", direction="backward")
        again = await host.client.call("get_available_models")
        state = await host.client.get_state()
    # The plugin changed the session's model (what set_model answers), never the registry's.
    assert chosen["name"] == "plugin was here" and chosen["cost"]["input"] == 12345
    assert again == first
    models = {(m["provider"], m["id"]): m for m in first["models"]}
    assert models[("local", "qwen")]["name"] == "qwen again (replaces the first)"
    assert models[("local", "qwen")]["input"] == ["text"] and models[("local", "qwen")]["cost"]["input"] == 0
    assert cycled["model"]["id"] == "claude-sonnet-4-5"
    assert state["model"]["id"] == "qwen"
    assert "plugin was here" not in json.dumps(first)
