"""Where plugins come from, and whether project-local code may run."""

from __future__ import annotations

import json
import os
from pathlib import Path

BUILTIN_PLUGINS: tuple[str, ...] = (
    "builtin_plugins.providers",
    "builtin_plugins.catalog",
    "builtin_plugins.oauth",
    "builtin_plugins.stores",
    "builtin_plugins.catalog.known_keys",
    "builtin_plugins.tools",
    "builtin_plugins.codemode",
    "builtin_plugins.tool_search",
    "builtin_plugins.prompts",
    "builtin_plugins.skills",
    "builtin_plugins.export_html",
    "builtin_plugins.mcp",
    "builtin_plugins.workflows",
    "builtin_plugins.compaction",
    "builtin_plugins.summaries",
    "builtin_plugins.approvals",
)
"""Built-in features, registered through the same hooks as third-party plugins."""

APPROVALS = "builtin_plugins.approvals"
"""The built-in permission gate (docs/permissions.md): when it fails to load while the permission
mode asks for approvals, tool calls are blocked as for a fail-closed gate (``Runtime.load_plugins``)."""

ESSENTIAL: frozenset[str] = frozenset({"builtin_plugins.providers"})
"""Built-ins that cannot be blocked: without them no model can stream."""


def extension_files(directory: Path) -> list[Path]:
    """``*.py`` files of an extensions dir, sorted (non-recursive, private ``_*.py`` skipped)."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.glob("*.py") if not p.name.startswith("_") and p.is_file())


def trust_file(agent_dir: Path) -> Path:
    return agent_dir / "trust.json"


def saved_trust(agent_dir: Path, cwd: str) -> bool | None:
    """The saved decision for this project in ``trust.json`` (``{"<abs path>": true|false}``)."""
    try:
        data = json.loads(trust_file(agent_dir).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    decision = data.get(os.path.realpath(cwd), data.get(cwd))
    return decision if isinstance(decision, bool) else None


def project_trusted(agent_dir: Path, cwd: str, default_trust: str | None, approve: bool | None) -> bool:
    """RPC never prompts: ``--approve``/``--no-approve``, else trust.json, else ``defaultProjectTrust``.

    ``ask`` and ``never`` both mean untrusted here; only ``always`` trusts an unknown project.
    """
    if approve is not None:
        return approve
    saved = saved_trust(agent_dir, cwd)
    if saved is not None:
        return saved
    return default_trust == "always"
