#!/usr/bin/env python3
"""Write the built-in provider table of ``docs/host.md`` from the providers the built-in plugins register.

The table sits between ``<!-- providers:start -->`` and ``<!-- providers:end -->``; the test
``tests/providers/compat/test_provider_docs.py`` fails when it differs from what this script writes,
so the documentation cannot drift from the catalog.

Usage::

    python scripts/provider_table.py           # rewrite the table in docs/host.md
    python scripts/provider_table.py --check   # exit 1 if it is out of date
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "host.md"
START, END = "<!-- providers:start -->", "<!-- providers:end -->"


def builtin_providers() -> list[Any]:
    """Every ``ProviderInfo`` the built-in plugins register, in registration order (a later
    registration with the same id replaces an earlier one, as in the host's registry)."""
    sys.path.insert(0, str(ROOT))
    import builtin_plugins.catalog as catalog
    import builtin_plugins.catalog.known_keys as known_keys
    import builtin_plugins.providers as providers
    from atomic_host.contract.providers import ProviderInfo

    seen: dict[str, Any] = {}

    def register(item: Any) -> None:
        if isinstance(item, ProviderInfo):
            seen.pop(item.id, None)
            seen[item.id] = item

    catalog.register_providers(register)
    providers.register_providers(register, api=None)
    known_keys.register_providers(register)
    return list(seen.values())


def _keys(p: Any) -> str:
    if p.scripted:
        return "none (only when asked for by name)"
    if p.always_authenticated:
        return "none (local server)"
    keys = ", ".join(f"`{k}`" for k in p.env_keys)
    if p.oauth:
        return f"{keys} or a login" if keys else "a login (no key variable)"
    return keys or "none"


def _models(p: Any) -> str:
    if p.models:
        return str(len(p.models))
    return "yours, in `models.json`"


def render() -> str:
    """The markdown table (without the markers)."""
    rows = [
        "| provider | name | wire API (`api`; per model where they differ) | key (environment, first set wins) "
        "| built-in models |",
        "| --- | --- | --- | --- | --- |",
    ]
    for p in builtin_providers():
        apis = list(dict.fromkeys(m.get("api", p.api) for m in p.models)) or [p.api]
        api = ", ".join(f"`{a}`" for a in apis) if p.api else "from `models.json`"
        rows.append(f"| `{p.id}` | {p.name} | {api} | {_keys(p)} | {_models(p)} |")
    return "\n".join(rows)


def rewrite(text: str) -> str:
    """``text`` (docs/host.md) with the table between the markers replaced."""
    head, _, rest = text.partition(START)
    _, found, tail = rest.partition(END)
    if not found:
        raise SystemExit(f"{DOC}: the markers {START} … {END} are missing")
    return f"{head}{START}\n{render()}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    """Rewrite (or ``--check``) the table in docs/host.md."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the table is out of date")
    args = parser.parse_args(argv)
    text = DOC.read_text("utf-8")
    new = rewrite(text)
    if new == text:
        return 0
    if args.check:
        print("docs/host.md's provider table is out of date: run scripts/provider_table.py", file=sys.stderr)
        return 1
    DOC.write_text(new, "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
