"""The ``atomic`` command: ``--mode rpc|json|print|acp``, ``-p PROMPT``, and the ``schema``,
``plugins``, ``sessions``, ``login`` and ``worker`` subcommands."""

from __future__ import annotations

import gc
import os
import signal
import sys
from typing import TYPE_CHECKING, Any

from atomic_host.core.options import Options
from atomic_host.core.options import csv_list as _csv

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

SUBCOMMANDS = {
    "schema": "print the JSON Schema of the RPC protocol",
    "plugins": "list plugins, their hooks and call order",
    "sessions": "list sessions; copy them between JSONL and SQLite",
    "login": "sign in to a provider (OAuth) or store its API key",
    "worker": "run workflow stages with no client attached",
}

DESCRIPTION = """\
atomic-host: the Atomic coding-agent host, built of plugins.

Without -p it serves the JSON-lines RPC protocol on stdin/stdout (one command per line).
With -p it runs one prompt and prints the answer, streaming as it arrives."""

EPILOG = """\
examples:
  atomic -p "explain this repository"
  git diff | atomic -p "review this"        the prompt, a blank line, then the piped text
  echo "what is 2+2?" | atomic -p           the prompt read from stdin
  atomic -p "list the files" --output-format json
  atomic sessions list

Run `atomic SUBCOMMAND --help` for a subcommand's options."""

RPC_TTY_HINT = (
    "atomic: this is the JSON-lines RPC host; it reads one JSON command per line, e.g.\n"
    '  {"type":"prompt","message":"hello"}\n'
    'For an answer in the terminal, run: atomic -p "your question"\n'
    "More: atomic --help. Ctrl-D quits."
)


def build_parser() -> argparse.ArgumentParser:
    # argparse (with gettext, and shutil + bz2/lzma for its help formatter) costs ~6 ms of a
    # 2-core machine's startup; a plain RPC command line never gets here (see quick_options).
    import argparse

    p = argparse.ArgumentParser(
        prog="atomic",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from atomic_host import __version__

    p.add_argument("-V", "--version", action="version", version=f"atomic-host {__version__}")
    sub = p.add_subparsers(
        title="subcommands", dest="subcommand", metavar="SUBCOMMAND", help="`atomic SUBCOMMAND --help` for its options"
    )
    for name, text in SUBCOMMANDS.items():
        # Listed here for --help; main() dispatches them before this parser runs.
        sub.add_parser(name, help=text, add_help=False).add_argument("rest", nargs=argparse.REMAINDER)
    p.add_argument(
        "--mode",
        choices=("rpc", "json", "print", "acp"),
        help="rpc: JSON lines on stdin/stdout (the default without -p); json: run the -p prompt and print "
        "every event as JSON lines; print: run the prompt and print the answer (the default with -p); "
        "acp: the Agent Client Protocol for editors (docs/acp.md)",
    )
    p.add_argument(
        "-p",
        "--print",
        dest="prompt",
        metavar="PROMPT",
        nargs="?",
        const="",
        help="run one prompt and print the answer; piped stdin is appended to it, "
        "or is the prompt when PROMPT is left out",
    )
    p.add_argument(
        "--output-format",
        choices=("text", "json", "stream-json"),
        help="print mode output: text (default), json (one final result object) or "
        "stream-json (one JSON object per line, then the result)",
    )
    p.add_argument("--hide-thinking", action="store_true", help="print mode: do not show the model's thinking")
    p.add_argument(
        "-q", "--quiet", action="store_true", help="print mode: no final line with model, tokens, cost and time"
    )
    p.add_argument("--provider", help="provider to use (anthropic, openai, …); picks its first available model")
    p.add_argument("--model", help="model id, provider/id, optionally :thinking-level")
    p.add_argument(
        "--thinking",
        choices=("off", "minimal", "low", "medium", "high", "xhigh", "max"),
        help="thinking (reasoning) level",
    )
    p.add_argument("--api-key", help="API key for --provider (or for the chosen model's provider)")
    p.add_argument("--models", type=_csv, help="comma-separated model patterns for cycle_model")
    p.add_argument("--list-models", action="store_true", help="list available models and exit")
    p.add_argument("--session", help="session file or id to open")
    p.add_argument(
        "-c", "--continue", dest="continue_session", action="store_true", help="continue the most recent session"
    )
    p.add_argument("--no-session", action="store_true", help="keep the session in memory only")
    p.add_argument("--session-dir", metavar="DIR", help="directory that holds the session store")
    p.add_argument(
        "--session-store", metavar="KIND", help="session store kind: jsonl (default), sqlite, memory or a plugin's"
    )
    p.add_argument("-n", "--name", help="name the new session")
    p.add_argument("--export", nargs="+", metavar=("SESSION", "OUTPUT"), help="export a session to HTML and exit")
    p.add_argument(
        "--export-format", default="html", metavar="NAME", help="exporter for --export (default: html)"
    )
    p.add_argument(
        "-e",
        "--extension",
        dest="extensions",
        action="append",
        default=[],
        metavar="PATH",
        help="load a local extension file or directory (repeatable)",
    )
    p.add_argument("--no-extensions", action="store_true", help="load no installed or local extensions")
    p.add_argument(
        "--prompt-template",
        dest="prompt_templates",
        action="append",
        default=[],
        metavar="PATH",
        help="load a prompt template file or directory (repeatable)",
    )
    p.add_argument(
        "--skill",
        dest="skills",
        action="append",
        default=[],
        metavar="PATH",
        help="load a skill file or directory (repeatable)",
    )
    approve = p.add_mutually_exclusive_group()
    approve.add_argument(
        "--approve",
        dest="approve",
        action="store_true",
        default=None,
        help="trust this project: load its .atomic extensions and settings",
    )
    approve.add_argument(
        "--no-approve", dest="approve", action="store_false", help="do not trust this project's .atomic directory"
    )
    p.add_argument("--watch", action="store_true", help="hot-reload local extension files")
    p.add_argument(
        "--tools",
        type=_csv,
        metavar="LIST",
        help="comma-separated tools: names replace the defaults, +name adds one (e.g. +ls), -name removes one",
    )
    p.add_argument("--no-tools", action="store_true", help="offer the model no tools")
    p.add_argument("--no-builtin-tools", action="store_true", help="offer no built-in tools (extension tools stay)")
    p.add_argument("--exclude-tools", type=_csv, default=[], metavar="LIST", help="comma-separated tools to leave out")
    p.add_argument("--system-prompt", metavar="TEXT", help="replace the default system prompt")
    p.add_argument("--append-system-prompt", metavar="TEXT", help="append text to the system prompt")
    return p


_QUICK_VALUE = {
    "--mode": "mode",
    "--provider": "provider",
    "--model": "model",
    "--thinking": "thinking",
    "--api-key": "api_key",
    "--models": "models",
    "--session": "session",
    "--session-dir": "session_dir",
    "--session-store": "session_store",
    "-n": "name",
    "--name": "name",
    "-e": "extensions",
    "--extension": "extensions",
    "--prompt-template": "prompt_templates",
    "--skill": "skills",
    "--tools": "tools",
    "--exclude-tools": "exclude_tools",
    "--system-prompt": "system_prompt",
    "--append-system-prompt": "append_system_prompt",
}
"""Options taking one value that :func:`quick_options` reads: flag → Options field."""
_QUICK_FLAG = {
    "--no-session": ("no_session", True),
    "-c": ("continue_session", True),
    "--continue": ("continue_session", True),
    "--no-extensions": ("no_extensions", True),
    "--approve": ("approve", True),
    "--no-approve": ("approve", False),
    "--watch": ("watch", True),
    "--no-tools": ("no_tools", True),
    "--no-builtin-tools": ("no_builtin_tools", True),
}
_QUICK_APPEND = frozenset({"extensions", "prompt_templates", "skills"})
_QUICK_CSV = frozenset({"models", "tools", "exclude_tools"})
_QUICK_CHOICES = {"mode": ("rpc", "acp"), "thinking": ("off", "minimal", "low", "medium", "high", "xhigh", "max")}
"""Only the serving modes: print/json need -p and its print-mode flags, which take the full parser."""


def quick_options(argv: list[str]) -> tuple[Options, Any] | None:
    """The ``(Options, namespace)`` :func:`parse_options` would return, for the plain command lines
    of a serving host (``--mode rpc --model p/m --no-session …``), without importing argparse; None
    for anything else (help, print mode, subcommands, ``--opt=value``, abbreviations, a value that
    starts with ``-``, a choice argparse would refuse, ``--approve`` with ``--no-approve``), which
    then goes through argparse and gets its exact behaviour and messages."""
    values: dict[str, Any] = {"extensions": [], "prompt_templates": [], "skills": [], "exclude_tools": []}
    i, n = 0, len(argv)
    while i < n:
        arg = argv[i]
        flag = _QUICK_FLAG.get(arg)
        if flag is not None:
            key, value = flag
            if key == "approve" and values.get(key, value) != value:
                return None  # mutually exclusive: argparse's error
            values[key] = value
            i += 1
            continue
        key = _QUICK_VALUE.get(arg)
        if key is None or i + 1 >= n or argv[i + 1].startswith("-"):
            return None
        value = argv[i + 1]
        if key in _QUICK_CHOICES and value not in _QUICK_CHOICES[key]:
            return None
        if key in _QUICK_APPEND:
            values[key].append(value)
        else:
            values[key] = _csv(value) if key in _QUICK_CSV else value
        i += 2
    values.setdefault("mode", "rpc")
    ns = _QuickNamespace(**values)
    return Options(**values), ns


class _QuickNamespace:
    """What :func:`main` reads of argparse's namespace, for a :func:`quick_options` command line."""

    subcommand = None
    prompt = None
    output_format = None
    hide_thinking = False
    quiet = False
    list_models = False
    export = None
    export_format = "html"

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)


def extension_flags(argv: list[str], parser: argparse.ArgumentParser) -> tuple[list[str], dict[str, bool | str]]:
    """Split the long options no host option owns (not even as an abbreviation) off ``argv``:
    ``--name=value``, ``--name value`` (a next word not starting with ``-``) or ``--name`` alone
    (True). Extensions declare them (``api.register_flag``); the runtime refuses the rest."""
    known = [o for o in parser._option_string_actions if o.startswith("--")]
    rest: list[str] = []
    flags: dict[str, bool | str] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg[2:].partition("=")
        if arg == "--" or not arg.startswith("--") or not name or any(o.startswith(arg.split("=")[0]) for o in known):
            if arg == "--":
                rest += argv[i:]
                break
            rest.append(arg)
            i += 1
            continue
        if eq:
            flags[name] = value
        elif i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            flags[name] = argv[i + 1]
            i += 1
        else:
            flags[name] = True
        i += 1
    return rest, flags


def parse_options(argv: list[str], parser: argparse.ArgumentParser | None = None) -> tuple[Options, argparse.Namespace]:
    parser = parser or build_parser()
    argv, flags = extension_flags(argv, parser) if not (argv and argv[0] in SUBCOMMANDS) else (argv, {})
    ns = parser.parse_args(argv)
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
        extension_flags=flags,
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

        return _reader_may_leave(lambda: getattr(subcommands, argv[0])(argv[1:]))
    quick = quick_options(argv)
    parser = None
    if quick is not None:
        opts, ns = quick
    else:
        parser = build_parser()
        opts, ns = parse_options(argv, parser)
    if ns.subcommand:
        (parser or build_parser()).error(f"put the subcommand first: atomic {ns.subcommand} ...")
    if (missing := opts.missing_extension()) is not None:
        print(missing, file=sys.stderr)
        return 2
    if ns.list_models:
        from atomic_host.frontends.subcommands import list_models

        return _reader_may_leave(lambda: list_models(opts))
    if ns.export:
        from atomic_host.frontends.subcommands import export_session

        return _reader_may_leave(lambda: export_session(opts, ns.export, ns.export_format))
    if opts.mode != "print" and (ns.output_format or ns.hide_thinking or ns.quiet):
        (parser or build_parser()).error("--output-format, --hide-thinking and -q/--quiet apply to print mode (-p)")
    if opts.mode == "rpc":
        if _stdin_is_tty():
            print(RPC_TTY_HINT, file=sys.stderr, flush=True)
        # The collector pauses over the whole start, the RPC frontend's imports (asyncio, …)
        # included, and runs again once the host has started (frontends/rpc/main.py _startup_done).
        collecting = gc.isenabled()
        gc.disable()
        from atomic_host.frontends.rpc.main import run_rpc

        return run_rpc(opts, collecting=collecting)
    if opts.mode == "acp":
        from atomic_host.frontends.acp.main import run_acp

        return run_acp(opts)
    if opts.mode == "json" and not opts.prompt:
        print('atomic: --mode json needs a prompt: atomic --mode json -p "PROMPT"', file=sys.stderr)
        return 2
    from atomic_host.frontends.oneshot import PrintOptions, run_oneshot

    return run_oneshot(
        opts, PrintOptions(output_format=ns.output_format or "text", hide_thinking=ns.hide_thinking, quiet=ns.quiet)
    )


def _reader_may_leave(command: Callable[[], int]) -> int:
    """Run a command that prints to stdout; when its reader leaves (``atomic schema | head``), end
    quietly with 141, as a writer killed by SIGPIPE, instead of a BrokenPipeError traceback (the
    rest of the output goes to /dev/null, so the interpreter's last flush does not fail again)."""
    try:
        code = command()
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 141


def _stdin_is_tty() -> bool:
    try:
        return os.isatty(0)
    except OSError:
        return False


if __name__ == "__main__":
    sys.exit(main())
