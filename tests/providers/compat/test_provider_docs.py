"""docs/host.md's provider table is the one ``scripts/provider_table.py`` writes from the
providers the built-in plugins register, so the documentation cannot drift from the catalog."""

from __future__ import annotations

import importlib.util
import re
from typing import Any

from suite_paths import ROOT as ROOT_DIR

from builtin_plugins.catalog.data import catalog_providers

ROOT = ROOT_DIR


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("provider_table", ROOT / "scripts" / "provider_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


table = _script()


def test_host_md_provider_table_is_generated_from_the_catalog() -> None:
    text = (ROOT / "docs" / "host.md").read_text("utf-8")
    assert table.rewrite(text) == text, "docs/host.md's provider table is out of date: run scripts/provider_table.py"


def test_the_table_has_every_catalog_provider_with_its_keys_and_api() -> None:
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `([^`]+)` \|.*\|$", table.render(), re.MULTILINE)}
    for name in ("catalog.json", "compat.json", "google.json"):
        for provider in catalog_providers(name):
            row = rows[provider.id]
            assert f"`{provider.api}`" in row
            for key in provider.env_keys:
                assert f"`{key}`" in row
            assert (str(len(provider.models)) in row) if provider.models else "models.json" in row
    assert {"faux", "github-copilot", "openai-codex", "fireworks", "together", "huggingface"} <= rows.keys()
