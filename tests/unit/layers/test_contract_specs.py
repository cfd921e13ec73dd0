"""The contract package: every hook declares its combining rule and its typed event, and the
runtime's ExtensionAPI offers everything the HostAPI Protocol promises plugins."""

from __future__ import annotations

import inspect

import pytest
from suite_paths import DOCS

from atomic_host.api import ExtensionAPI
from atomic_host.contract import hookspecs
from atomic_host.contract.events import EVENT_TYPES
from atomic_host.contract.host import HostAPI
from atomic_host.contract.markers import PROJECT_NAME

SPECS = {
    name: fn
    for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
    if getattr(fn, PROJECT_NAME + "_spec", None) is not None
}


def test_every_spec_declares_a_rule_and_no_rule_lacks_a_spec() -> None:
    assert set(hookspecs.DISPATCH_RULES) == set(SPECS)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_spec_rule_is_documented_and_well_formed(name: str) -> None:
    rule = hookspecs.DISPATCH_RULES[name]
    assert rule.combine in hookspecs.Combine.__args__  # type: ignore[attr-defined]
    # Rules that pick or combine results need result types to pick from; observers do not.
    if rule.combine != "each":
        assert rule.returns, f"{name}: rule {rule.combine} without accepted result types"
    assert all(isinstance(t, type) for t in rule.returns)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_event_hooks_have_a_typed_event(name: str) -> None:
    params = inspect.signature(SPECS[name]).parameters
    if "event" not in params or name == "on_event":  # on_event gets the wire dict, for speed
        assert name not in EVENT_TYPES
        return
    event_type = EVENT_TYPES[name]
    assert params["event"].annotation == event_type.__name__


def test_extension_api_implements_host_api() -> None:
    promised = {n for n in dir(HostAPI) if not n.startswith("_")}
    missing = sorted(n for n in promised if not hasattr(ExtensionAPI, n))
    assert not missing, f"ExtensionAPI lacks {missing}"
    for name in promised:
        ours, theirs = getattr(ExtensionAPI, name), getattr(HostAPI, name)
        if inspect.isfunction(theirs):
            assert inspect.iscoroutinefunction(ours) == inspect.iscoroutinefunction(theirs), name
            assert list(inspect.signature(ours).parameters) == list(inspect.signature(theirs).parameters), name


def test_public_names_still_import_from_the_package() -> None:
    import atomic_host

    for name in atomic_host.__all__:
        assert getattr(atomic_host, name) is not None, name
    from atomic_host import Cancel, InputResult, Tool, ToolCallDecision, hookimpl  # noqa: F401


@pytest.mark.parametrize("name", sorted(SPECS))
def test_hooks_md_states_each_rule(name: str) -> None:

    text = (DOCS / "hooks.md").read_text()
    section = text.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
    assert f"**Rule:** `{hookspecs.DISPATCH_RULES[name].combine}`" in section
