"""Keeps the test tree importable as a whole: test dirs are not packages, so a module named
``conftest`` is shared by all of them and ``from conftest import …`` picks whichever loaded last."""

from __future__ import annotations

from suite_paths import TESTS


def test_no_test_module_imports_from_conftest() -> None:
    offenders = [
        str(p.relative_to(TESTS))
        for p in TESTS.rglob("*.py")
        if any(line.startswith(("from conftest import", "import conftest")) for line in p.read_text().splitlines())
    ]
    assert offenders == [], f"move shared helpers into a uniquely named module: {offenders}"


def test_helper_module_names_are_unique() -> None:
    names: dict[str, list[str]] = {}
    for p in TESTS.rglob("*.py"):
        if p.name != "conftest.py" and "__pycache__" not in p.parts:
            names.setdefault(p.name, []).append(str(p.relative_to(TESTS)))
    clashes = {name: paths for name, paths in names.items() if len(paths) > 1}
    assert clashes == {}, f"test module names must be unique across tests/: {clashes}"
