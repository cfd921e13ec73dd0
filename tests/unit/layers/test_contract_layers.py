"""The import contracts of pyproject.toml ([tool.importlinter]) hold, and every exception to them is
a commented, countable `# phase B:` entry."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from suite_paths import ROOT

PYPROJECT = ROOT / "pyproject.toml"


def test_lint_imports_passes() -> None:
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    proc = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout


def test_contracts_cover_the_layers_and_both_plugin_rules() -> None:
    config = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]
    contracts = {c["id"]: c for c in config["contracts"]}
    assert contracts["layers"]["layers"][-1] == "atomic_host.contract"
    assert contracts["host-names-builtins-as-strings"]["forbidden_modules"] == ["builtin_plugins"]
    assert "atomic_host.core" in contracts["plugins-see-the-contract"]["forbidden_modules"]
    assert contracts["no-cycles"]["type"] == "acyclic_siblings"


def test_every_ignored_import_is_a_commented_phase_b_item() -> None:
    text = PYPROJECT.read_text()
    for block in re.findall(r"ignore_imports = \[\n(.*?)\n\]", text, re.S):
        comment = None
        for line in block.splitlines():
            line = line.strip()
            if line.startswith("#"):
                comment = line
            elif line:
                assert comment and comment.startswith("# phase B:"), f"{line} has no '# phase B:' comment"
