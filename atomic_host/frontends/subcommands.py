"""``atomic schema``, ``atomic plugins``, ``atomic sessions``, ``--list-models`` and ``--export``."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from atomic_host.core.options import Options


def schema(argv: list[str]) -> int:
    """Print the JSON Schema of the whole protocol."""
    from atomic_host.core.protocol.schema import protocol_schema

    sys.stdout.write(json.dumps(protocol_schema(), indent=2, sort_keys=True) + "\n")
    return 0


def _runtime(opts: Options):
    from atomic_host.frontends.rpc.io import Output
    from atomic_host.runtime import Runtime

    return Runtime(opts, out=Output(fd=sys.stderr.fileno()))


def plugins(argv: list[str]) -> int:
    """List plugins: source, version, status, hooks, and per-hook call order.

    ``--json`` prints machine-readable output. ``--no-load`` lists without importing
    third-party code (entry points are read from metadata only).
    """
    import argparse

    from atomic_host.core.options import Options
    from atomic_host.core.options import csv_list as _csv

    p = argparse.ArgumentParser(prog="atomic plugins")
    p.add_argument("--json", action="store_true")
    p.add_argument("--no-load", action="store_true", help="list third-party plugins without importing them")
    p.add_argument("-e", "--extension", dest="extensions", action="append", default=[])
    p.add_argument("--no-extensions", action="store_true")
    p.add_argument("--approve", action="store_true", default=None)
    p.add_argument("--tools", type=_csv)
    ns = p.parse_args(argv)
    opts = Options(extensions=ns.extensions, no_extensions=ns.no_extensions or ns.no_load, approve=ns.approve)
    rt = _runtime(opts)
    rt.load_plugins()
    rows = []
    for rec in rt.plugins.records.values():
        rows.append(
            {
                "name": rec.name,
                "source": rec.source,
                "version": rec.version,
                "status": rec.status,
                "path": rec.path,
                "error": rec.error,
                "hooks": rec.hooks(rt.plugins.pm),
            }
        )
    if ns.no_load:
        import importlib_metadata

        for ep in importlib_metadata.entry_points(group="atomic_host"):
            rows.append(
                {
                    "name": ep.name,
                    "source": "entrypoint",
                    "version": ep.dist.version if ep.dist else None,
                    "status": "not loaded",
                    "path": ep.value,
                    "error": None,
                    "hooks": [],
                }
            )
    order = rt.plugins.hook_order()
    if ns.json:
        print(json.dumps({"plugins": rows, "callOrder": order}, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title="Plugins")
    for col in ("name", "source", "version", "status", "hooks"):
        table.add_column(col)
    for r in rows:
        status = r["status"] + (f" ({r['error']})" if r["error"] else "")
        table.add_row(r["name"], r["source"], r["version"] or "-", status, ", ".join(r["hooks"]))
    console.print(table)
    console.print("[bold]Call order per hook[/bold] (first runs first)")
    for hook, names in order.items():
        console.print(f"  {hook}: " + " → ".join(names))
    return 0


def sessions(argv: list[str]) -> int:
    """``atomic sessions import|export``: move sessions between the JSONL and SQLite stores."""
    from atomic_host.session.transfer import main

    return main(argv)


def list_models(opts: Options) -> int:
    rt = _runtime(opts)
    rt.load_plugins()
    for m in rt.models.available():
        print(
            f"{m['provider']}/{m['id']}\tcontext {m['contextWindow']}\tmax {m['maxTokens']}"
            f"\t{'reasoning' if m.get('reasoning') else ''}"
        )
    return 0


def export_session(opts: Options, args: list[str]) -> int:
    import os
    from pathlib import Path

    from atomic_host.engine.agent_session import open_session_ref
    from atomic_host.kit.fsio import atomic_write
    from builtin_plugins.export_html import default_export_path, render_html

    rt = _runtime(opts)
    _ = rt.models  # registers models.json credentials too (env and auth.json ones are known already)
    try:
        session = open_session_ref(rt.store, args[0])
    except Exception as exc:
        print(f"atomic: cannot open session {args[0]}: {exc}", file=sys.stderr)
        return 1
    out = args[1] if len(args) > 1 else default_export_path(session)
    atomic_write(Path(os.path.abspath(out)), render_html(session.header, session.entries, session.leaf_id))
    print(os.path.abspath(out))
    return 0
