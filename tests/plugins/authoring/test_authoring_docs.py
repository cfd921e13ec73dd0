"""Meta-tests that keep the extension API honest: every hookspec documented, no phantom hooks."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from suite_paths import DOCS

from atomic_host.contract import hookspecs
from atomic_host.contract.markers import PROJECT_NAME

DOCS = DOCS
HOOKS_MD = DOCS / "hooks.md"


def _hookspec_names() -> list[str]:
    marker = PROJECT_NAME + "_spec"
    return [
        name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction) if getattr(fn, marker, None) is not None
    ]


SPECS = _hookspec_names()
SECTIONS = re.findall(r"^## (\S+)\s*$", HOOKS_MD.read_text(), re.MULTILINE)


def test_hookspecs_were_found() -> None:
    assert len(SPECS) >= 10, SPECS
    assert {"register_tools", "tool_call", "input"} <= set(SPECS)


@pytest.mark.parametrize("name", SPECS)
def test_hookspec_is_documented(name: str) -> None:
    assert name in SECTIONS, f"docs/hooks.md has no '## {name}' section"


@pytest.mark.parametrize("name", SPECS)
def test_hookspec_has_docstring(name: str) -> None:
    doc = inspect.getdoc(getattr(hookspecs, name))
    assert doc and len(doc) > 20, f"hookspec {name} needs a docstring saying when it fires"


def test_hooks_md_documents_no_phantom_hooks() -> None:
    phantom = sorted(set(SECTIONS) - set(SPECS))
    assert not phantom, f"docs/hooks.md documents hooks that do not exist: {phantom}"
    assert len(SECTIONS) == len(set(SECTIONS)), "a hook is documented twice"


def test_hooks_md_follows_hookspec_order() -> None:
    source_order = sorted(SPECS, key=lambda n: inspect.getsourcelines(getattr(hookspecs, n))[1])
    assert source_order == SECTIONS


def _hookimpl_functions(text: str) -> set[str]:
    """Names of functions decorated with ``@hookimpl`` in code blocks or Python files."""
    return set(re.findall(r"@hookimpl(?:\([^)]*\))?\s*\n\s*(?:async\s+)?def\s+(\w+)", text))


@pytest.mark.parametrize(
    "path",
    sorted([*DOCS.glob("*.md"), *(DOCS.parent / "examples").rglob("*.py")]),
    ids=lambda p: p.name,
)
def test_docs_and_examples_implement_only_real_hooks(path: Path) -> None:
    unknown = sorted(_hookimpl_functions(path.read_text()) - set(SPECS))
    assert not unknown, f"{path.name} implements hooks that do not exist: {unknown}"


def test_docs_link_to_files_that_exist() -> None:
    for md in DOCS.glob("*.md"):
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", md.read_text()):
            assert (md.parent / target).exists(), f"{md.name} links to missing {target}"


def test_every_hook_section_has_an_example() -> None:
    # Also proves the @hookimpl scanner above actually finds implementations.
    assert _hookimpl_functions(HOOKS_MD.read_text()) == set(SPECS)
