"""The ``atomic`` command: ``--mode rpc|json|acp``, ``-p PROMPT``, and the ``schema``, ``plugins`` and
``sessions`` subcommands."""

from __future__ import annotations

import argparse
import signal
import sys

from atomic_host.core.options import Options
from atomic_host.core.options import csv_list as _csv

SUBCOMMANDS = ("schema", "plugins", "sessions")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="atomic",
        description="atomic-host: the Atomic coding-agent RPC protocol, built of plugins.",
        epilog="Subcommands: atomic schema | atomic plugins | atomic sessions import|export",
    )
    p.add_argument("--mode", choices=("rpc", "json", "print", "acp"), help="rpc: JSONL on stdin/stdout; acp: editors")
    p.add_argument(
        "-p", "--print", dest="prompt", metavar="PROMPT", help="run one prompt and print the answer"
    )
    p.add_argument("--provider")
    p.add_argument("--model", help="model id, provider/id, optionally :thinking-level")
    p.add_argument("--thinking", choices=("off", "minimal", "low", "medium", "high", "xhigh", "max"))
    p.add_argument("--api-key")
    p.add_argument("--models", type=_csv, help="comma-separated model patterns for cycle_model")
    p.add_argument("--list-models", action="store_true", help="list available models and exit")
    p.add_argument("--session", help="session file or id to open")
    p.add_argument("-c", "--continue", dest="continue_session", action="store_true")
    p.add_argument("--no-session", action="store_true", help="keep the session in memory only")
    p.add_argument("--session-dir")
    p.add_argument("--session-store", choices=("jsonl", "sqlite"))
    p.add_argument("-n", "--name")
    p.add_argument(
        "--export", nargs="+", metavar=("SESSION", "OUTPUT"), help="export a session to HTML and exit"
    )
    p.add_argument("-e", "--extension", dest="extensions", action="append", default=[])
    p.add_argument("--no-extensions", action="store_true")
    p.add_argument(
        "--prompt-template", dest="prompt_templates", action="append", default=[], metavar="PATH"
    )
    p.add_argument("--skill", dest="skills", action="append", default=[], metavar="PATH")
    approve = p.add_mutually_exclusive_group()
    approve.add_argument(
        "--approve",
        dest="approve",
        action="store_true",
        default=None,
        help="trust this project: load its .atomic extensions and settings",
    )
    approve.add_argument("--no-approve", dest="approve", action="store_false")
    p.add_argument("--watch", action="store_true", help="hot-reload local extension files")
    p.add_argument("--tools", type=_csv)
    p.add_argument("--no-tools", action="store_true")
    p.add_argument("--no-builtin-tools", action="store_true")
    p.add_argument("--exclude-tools", type=_csv, default=[])
    p.add_argument("--system-prompt")
    p.add_argument("--append-system-prompt")
    return p


def parse_options(argv: list[str]) -> tuple[Options, argparse.Namespace]:
    ns = build_parser().parse_args(argv)
    mode = ns.mode or ("print" if ns.prompt is not None else "rpc")
    opts = Options(
        mode=mode,
        prompt=ns.prompt,
        provider=ns.provider,
        model=ns.model,
        thinking=ns.thinking,
        api_key=ns.api_key,
        models=ns.models,
        session=ns.session,
        continue_session=ns.continue_session,
        no_session=ns.no_session,
        session_dir=ns.session_dir,
        session_store=ns.session_store,
        name=ns.name,
        extensions=ns.extensions,
        no_extensions=ns.no_extensions,
        prompt_templates=ns.prompt_templates,
        skills=ns.skills,
        approve=ns.approve,
        watch=ns.watch,
        tools=ns.tools,
        no_tools=ns.no_tools,
        no_builtin_tools=ns.no_builtin_tools,
        exclude_tools=ns.exclude_tools,
        system_prompt=ns.system_prompt,
        append_system_prompt=ns.append_system_prompt,
    )
    return opts, ns


def main(argv: list[str] | None = None) -> int:
    from atomic_host.kit.secrets import install_stdio

    install_stdio()  # every later write to sys.stdout/sys.stderr masks known credentials
    if hasattr(signal, "SIGXFSZ"):  # a file-size limit or quota makes a write fail (EFBIG), not kill the host
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in SUBCOMMANDS:
        from atomic_host.frontends import subcommands

        return getattr(subcommands, argv[0])(argv[1:])
    opts, ns = parse_options(argv)
    if ns.list_models:
        from atomic_host.frontends.subcommands import list_models

        return list_models(opts)
    if ns.export:
        from atomic_host.frontends.subcommands import export_session

        return export_session(opts, ns.export)
    if opts.mode == "rpc":
        from atomic_host.frontends.rpc.main import run_rpc

        return run_rpc(opts)
    if opts.mode == "acp":
        from atomic_host.frontends.acp.main import run_acp

        return run_acp(opts)
    if opts.prompt is None:
        print("atomic: --mode json and print mode need a prompt (-p PROMPT)", file=sys.stderr)
        return 2
    from atomic_host.frontends.oneshot import run_oneshot

    return run_oneshot(opts)


if __name__ == "__main__":
    sys.exit(main())
