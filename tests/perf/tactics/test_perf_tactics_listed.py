"""Every speed tactic (a module of atomic_host/kit/_fast) says in its docstring's first line why it
is there and which bar it serves, and docs/performance.md gives its figure, benchmark and test."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from suite_paths import ROOT

FAST = ROOT / "atomic_host" / "kit" / "_fast"
TACTICS = sorted(p for p in FAST.glob("*.py") if p.name != "__init__.py")


@pytest.mark.parametrize("path", TACTICS, ids=lambda p: p.stem)
def test_each_tactic_names_its_bar_and_is_in_performance_md(path: Path) -> None:
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    first = doc.splitlines()[0] if doc else ""
    assert "bar" in first, f"{path.name}: the first docstring line says which bar it serves"
    assert f"`kit/_fast/{path.name}`" in (ROOT / "docs" / "performance.md").read_text()


def test_a_missing_sniffio_is_marked_missing_once() -> None:
    """``kit/_fast/sniffio_absent.py``: with the tactic, an absent sniffio is ``None`` in
    ``sys.modules`` once a provider client exists (httpcore's ``import sniffio`` then fails at
    once); on the plain path it stays absent."""
    probe = (
        "import sys; from atomic_host.kit.llm.http_client import new_http_client; new_http_client();"
        "print(repr(sys.modules.get('sniffio', 'absent')))"
    )
    if subprocess.run([sys.executable, "-c", "import sniffio"], capture_output=True).returncode == 0:
        pytest.skip("sniffio is installed: the tactic leaves it alone")
    outputs = {}
    for plain in ("0", "1"):
        env = {"ATOMIC_PLAIN": plain, "PATH": "/usr/bin:/bin"}
        run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
        outputs[plain] = run.stdout.strip()
    assert outputs == {"0": "None", "1": "'absent'"}
