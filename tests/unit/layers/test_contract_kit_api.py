"""The kit's public API (``atomic_host.kit.__all__`` and each public module's ``__all__``): the
built-in plugins, the docs' examples and ``examples/`` import nothing else of the kit, every public
name exists and is documented in docs/kit.md, and ``atomic_host.kit._fast`` stays private."""

from __future__ import annotations

import ast
import importlib
import re
from types import ModuleType

import pytest
from suite_paths import ROOT

KIT_DOC = (ROOT / "docs" / "kit.md").read_text()


def public_modules(name: str = "atomic_host.kit") -> dict[str, ModuleType]:
    """Every public module of the kit: the package, and what each ``__all__`` names as a submodule."""
    module = importlib.import_module(name)
    found = {name: module}
    for entry in module.__all__:
        try:
            sub = importlib.import_module(f"{name}.{entry}")
        except ModuleNotFoundError:
            continue
        found.update(public_modules(sub.__name__))
    return found


PUBLIC = public_modules()


def public_names(module: str) -> set[str]:
    return set(PUBLIC[module].__all__)


def kit_uses(source: str) -> list[tuple[int, str, str]]:
    """``(line, module, name)`` for every use of the kit in ``source``: ``from M import N``, ``import M``
    (name ``""``), and ``alias.N`` for a kit module bound to ``alias`` by either form."""
    tree = ast.parse(source)
    uses: list[tuple[int, str, str]] = []
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("atomic_host.kit"):
            for alias in node.names:
                uses.append((node.lineno, node.module, alias.name))
                if f"{node.module}.{alias.name}" in PUBLIC:
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("atomic_host.kit"):
                    uses.append((node.lineno, alias.name, ""))
                    if alias.asname:
                        aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            uses.append((node.lineno, aliases[node.value.id], node.attr))
    return uses


def problems_in(source: str, where: str) -> list[str]:
    problems = []
    for line, module, name in kit_uses(source):
        if module not in PUBLIC:
            problems.append(f"{where}:{line}: {module} is not a public kit module")
        elif name and name not in public_names(module):
            problems.append(f"{where}:{line}: {module}.{name} is not in {module}.__all__")
    return problems


def python_blocks(markdown: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", markdown, re.S)


def test_built_in_plugins_use_only_the_public_kit() -> None:
    problems = []
    for path in sorted((ROOT / "builtin_plugins").rglob("*.py")):
        problems += problems_in(path.read_text(), str(path.relative_to(ROOT)))
    assert problems == []


def test_the_docs_and_examples_use_only_the_public_kit() -> None:
    problems = []
    for path in sorted([*(ROOT / "docs").glob("*.md"), ROOT / "README.md"]):
        for block in python_blocks(path.read_text()):
            try:
                problems += problems_in(block, str(path.relative_to(ROOT)))
            except SyntaxError:  # a fragment (a signature, an elided body) is not checked
                continue
    for path in sorted((ROOT / "examples").rglob("*.py")):
        problems += problems_in(path.read_text(), str(path.relative_to(ROOT)))
    assert problems == []


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_every_public_name_exists_and_is_documented(module: str) -> None:
    mod = PUBLIC[module]
    assert mod.__doc__, f"{module} has no docstring"
    missing = [name for name in mod.__all__ if not hasattr(mod, name) and f"{module}.{name}" not in PUBLIC]
    assert missing == []
    if module == "atomic_host.kit":
        return
    undocumented = [name for name in mod.__all__ if f"{module}.{name}" not in PUBLIC and f"`{name}" not in KIT_DOC]
    assert undocumented == [], f"add them to docs/kit.md ({module})"


def test_the_docs_name_no_kit_module_that_is_not_public() -> None:
    """A module docs/kit.md names in its tables (``| `shell` |``) is one of the public ones."""
    named = set(re.findall(r"^\| `([a-z_]+)` \|", KIT_DOC, re.M))
    short = {name.rsplit(".", 1)[-1] for name in PUBLIC}
    assert named and named <= short


def test_the_fast_path_is_private() -> None:
    assert not any("_fast" in name for name in PUBLIC)
    for module in PUBLIC.values():
        assert not any(name.startswith("_") for name in module.__all__)


def test_a_plugin_importing_a_private_kit_name_is_caught() -> None:
    """The checker itself: each kind of use outside the public API is reported."""
    source = (
        "from atomic_host.kit._fast.http1 import DirectPool\n"
        "from atomic_host.kit.llm.http import _send\n"
        "from atomic_host.kit import secrets\n"
        "secrets.SecretSet()\n"
        "import atomic_host.kit._fast.lazy\n"
        "from atomic_host.kit.llm.http import drive\n"
    )
    problems = problems_in(source, "p.py")
    assert sorted(p.split(":")[1] for p in problems) == ["1", "2", "4", "5"]
