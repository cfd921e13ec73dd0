"""Copying sessions between stores, and the ``atomic sessions import|export`` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_host.contract.registrations import StoreOptions
from atomic_host.core.paths import agent_dir as default_agent_dir
from atomic_host.session.stores import open_store

if TYPE_CHECKING:
    from atomic_host.contract.registrations import SessionStoreFactory


def export_sessions(src: Any, dst: Any, cwd: str | None = None, *, overwrite: bool = False) -> int:
    """Copy sessions from ``src`` to ``dst`` (one project with ``cwd``, else all); returns how many
    were written. Sessions whose id ``dst`` already holds are skipped unless ``overwrite``."""
    infos = src.list(cwd) if cwd is not None else src.list_all()
    copied = 0
    for info in infos:
        session = src.open_path(info["path"])
        try:
            if not overwrite and dst.has(session.id):
                continue
            dst.put(session.header, session.entries, overwrite=overwrite).close()
            copied += 1
        finally:
            session.close()
    return copied


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="atomic sessions", description=main.__doc__)
    sub = parser.add_subparsers(dest="action", required=True)
    for action, src, dst in (("import", "jsonl", "sqlite"), ("export", "sqlite", "jsonl")):
        p = sub.add_parser(action)
        p.add_argument("--from", dest="src", metavar="KIND", default=src)
        p.add_argument("--to", dest="dst", metavar="KIND", default=dst)
        p.add_argument("--agent-dir", type=Path, default=None)
        p.add_argument("--session-dir", type=Path, default=None, help="source store's session dir")
        p.add_argument("--out", type=Path, default=None, help="destination store's session dir")
        scope = p.add_mutually_exclusive_group()
        scope.add_argument("--cwd", default=None, help="only this project's sessions")
        scope.add_argument("--all", action="store_true", help="every project (the default)")
        p.add_argument("--overwrite", action="store_true", help="replace sessions the target already has")
        p.add_argument("files", nargs="*", type=Path, help="import: JSONL session files to copy in")
    return parser


def main(argv: list[str], kinds: Mapping[str, SessionStoreFactory]) -> int:
    """Move sessions between the JSONL files and the SQLite database.

    ``atomic sessions import [FILE ...]`` copies JSONL sessions into SQLite (``--from jsonl
    --to sqlite`` are the defaults); with FILE arguments only those files are imported.
    ``atomic sessions export`` copies SQLite sessions out to JSONL files (``--from sqlite
    --to jsonl``). Flags: ``--agent-dir DIR`` (default: env ``ATOMIC_CODING_AGENT_DIR`` or
    ``~/.atomic/agent``), ``--session-dir DIR`` (source session dir), ``--out DIR``
    (destination session dir), ``--cwd PATH`` (one project; default: all), ``--overwrite``
    (replace sessions already present; default: skip them). Prints the count; exit 0, or 2 on
    bad usage, 1 on errors. ``kinds`` are the registered store kinds (any of them may be
    ``--from`` / ``--to``).
    """
    if argv and argv[0] == "sessions":
        argv = argv[1:]
    args = _parser().parse_args(argv)
    agent_dir = args.agent_dir or default_agent_dir()
    if args.src == args.dst and args.session_dir == args.out and not args.files:
        print("source and destination are the same store", file=sys.stderr)
        return 2
    try:
        dst = open_store(kinds, args.dst, StoreOptions(agent_dir, args.out, args.cwd or ""))
    except Exception as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    try:
        if args.files:
            for path in args.files:
                dst.import_file(path).close()
            count = len(args.files)
        else:
            src = open_store(kinds, args.src, StoreOptions(agent_dir, args.session_dir, args.cwd or ""))
            try:
                count = export_sessions(src, dst, args.cwd, overwrite=args.overwrite)
            finally:
                src.close()
    except Exception as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        dst.close()
    print(f"{count} session(s) copied to {args.dst}")
    return 0
