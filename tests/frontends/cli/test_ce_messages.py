"""``atomic --version``; the print-mode advice for a saved default model that is gone; ``atomic
plugins`` rows that never read the same; the install lines of the extras in the docs."""

from __future__ import annotations

import json
import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest
from cli_helper import atomic
from suite_paths import ROOT as ROOT_DIR

ROOT = ROOT_DIR


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(flag: str, tmp_path: Path) -> None:
    proc = atomic(tmp_path, flag)
    assert (proc.returncode, proc.stdout.decode(), proc.stderr) == (0, f"atomic-host {version('atomic-host')}\n", b"")


def test_a_stale_default_model_in_print_mode_names_the_flag_and_the_key(tmp_path: Path) -> None:
    """Before: "Choose a model with set_model (or --model), or fix models.json." (set_model is an
    RPC command) and no key variable."""
    (tmp_path / "agent").mkdir()
    settings = {"defaultProvider": "anthropic", "defaultModel": "claude-gone-1"}
    (tmp_path / "agent" / "settings.json").write_text(json.dumps(settings))
    proc = atomic(tmp_path, "-p", "hi")
    assert proc.returncode == 2
    assert proc.stderr.decode() == (
        "atomic: Your default model anthropic/claude-gone-1 (settings defaultProvider/defaultModel) is not "
        "available. Pick one with --model PROVIDER/ID (`atomic --list-models` lists them), or change "
        "defaultModel. anthropic has no API key. Set ANTHROPIC_API_KEY (or ANTHROPIC_OAUTH_TOKEN), pass "
        "--api-key KEY, or run `atomic login anthropic`.\n"
    )
    with_key = atomic(tmp_path, "-p", "hi", env={"ANTHROPIC_API_KEY": "sk-ant-test"})
    assert with_key.returncode == 2 and with_key.stderr.decode().endswith("or change defaultModel.\n")
    # an RPC client gets the protocol's words
    rpc = atomic(tmp_path, stdin=b'{"type":"prompt","message":"hi"}\n')
    [response] = [json.loads(line) for line in rpc.stdout.splitlines()]
    assert response["error"].endswith("Choose a model with set_model (or --model), or fix models.json.")


def _name_cells(table: str) -> list[str]:
    """The ``name`` column of a rich table, each row's wrapped lines joined."""
    names: list[str] = []
    for line in table.splitlines():
        if not line.startswith("│"):
            continue
        cells = [c.strip() for c in line.strip("│").split("│")]
        if cells[1]:  # the source column starts a row
            names.append(cells[0])
        else:
            names[-1] += cells[0]
    return names


def test_plugins_rows_never_read_the_same(tmp_path: Path) -> None:
    """Two extension paths that differ only past column 80. Before: both rows read
    ``local:/tmp/…`` and the hooks column ``register_provide…``."""
    deep = tmp_path / ("a-rather-long-directory-name-" * 3)
    deep.mkdir()
    paths = []
    for name in ("first_extension.py", "second_extension.py"):
        (deep / name).write_text("from atomic_host import hookimpl\n\n@hookimpl\ndef register_tools(register): ...\n")
        paths.append(str(deep / name))
    proc = atomic(tmp_path, "plugins", "-e", paths[0], "-e", paths[1])
    assert proc.returncode == 0
    names = _name_cells(proc.stdout.decode())
    assert f"local:{paths[0]}" in names and f"local:{paths[1]}" in names
    assert "builtin_plugins.providers" in names and len(set(names)) == len(names)
    assert "…" not in proc.stdout.decode()


def test_the_docs_install_extras_from_the_checkout() -> None:
    """Each ``pip install …[extra]`` in the README and docs installs from a checkout (``.[extra]``):
    the package is on no index, so ``pip install "atomic-host[acp]"`` fails. Every extra named exists."""
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    found = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for line in doc.read_text().splitlines():
            if "works only once the package is on an index" in line:  # the README says why not
                continue
            for spec in re.findall(r"pip install (?:-e )?['\"]?([\w.-]*)\[([\w,]+)\]", line):
                found.append((doc.name, *spec))
    assert {"acp", "mcp", "workflows"} <= {e for _, _, names in found for e in names.split(",")}
    for doc, target, names in found:
        assert set(names.split(",")) <= extras and target == ".", (doc, target, names)
