"""``atomic schema``, ``atomic plugins``, ``atomic sessions``, ``atomic login``, ``atomic worker``,
``--list-models`` and ``--export``."""

from __future__ import annotations

import argparse
import json
import os
import sys

from atomic_host.core.options import Options
from atomic_host.core.options import csv_list as _csv


def schema(argv: list[str]) -> int:
    """Print the JSON Schema of the whole protocol."""
    # lazy: pydantic and the protocol models, for atomic schema only
    from atomic_host.core.protocol.schema import protocol_schema

    argparse.ArgumentParser(
        prog="atomic schema", description="Print the JSON Schema of the RPC protocol (every command and event)."
    ).parse_args(argv)

    sys.stdout.write(json.dumps(protocol_schema(), indent=2, sort_keys=True) + "\n")
    return 0


def _runtime(opts: Options):
    # lazy: the runtime, for the subcommands that load plugins (atomic schema loads none of it)
    from atomic_host.frontends.rpc.io import Output
    from atomic_host.frontends.rpc.ui import RpcUI
    from atomic_host.runtime import Runtime

    out = Output(fd=sys.stderr.fileno())
    return Runtime(opts, out, RpcUI(out, has_ui=False))


def plugins(argv: list[str]) -> int:
    """List plugins: source, version, status, hooks, and per-hook call order.

    ``--json`` prints machine-readable output. ``--no-load`` lists without importing
    third-party code (entry points are read from metadata only).
    """
    p = argparse.ArgumentParser(
        prog="atomic plugins", description="List plugins: source, version, status, hooks, and per-hook call order."
    )
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
    p.add_argument("--no-load", action="store_true", help="list third-party plugins without importing them")
    p.add_argument(
        "-e",
        "--extension",
        dest="extensions",
        action="append",
        default=[],
        metavar="PATH",
        help="also load this local extension file or directory (repeatable)",
    )
    p.add_argument("--no-extensions", action="store_true", help="load no installed or local extensions")
    p.add_argument("--approve", action="store_true", default=None, help="trust this project's .atomic directory")
    p.add_argument("--tools", type=_csv, metavar="LIST", help="accepted as for atomic (tool selection)")
    ns = p.parse_args(argv)
    opts = Options(extensions=ns.extensions, no_extensions=ns.no_extensions or ns.no_load, approve=ns.approve)
    if (missing := opts.missing_extension()) is not None:
        print(missing, file=sys.stderr)
        return 2
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
        # lazy: importlib_metadata (~20 ms) only for --no-load
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
    # lazy: rich only for the table (not --json)
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.on_broken_pipe = _broken_pipe  # type: ignore[method-assign]  # rich's own exits 1
    table = Table(title="Plugins")
    for col in ("name", "source", "version", "status", "hooks"):
        table.add_column(col, overflow="fold")  # wrapped, never cut: two cut names would read the same
    for r in rows:
        table.add_row(r["name"], r["source"], r["version"] or "-", r["status"], "\n".join(r["hooks"]))
    console.print(table)
    for r in rows:
        if r["error"]:  # whole, below the table: an error cut or folded in a cell reads badly
            console.print(f"[bold]{r['name']}[/bold] {r['status']}: {r['error']}", overflow="fold", highlight=False)
    console.print("[bold]Call order per hook[/bold] (first runs first)")
    for hook, names in order.items():
        console.print(f"  {hook}: " + " → ".join(names))
    return 0


def _broken_pipe() -> None:
    """For rich: its reader left; raised for the command line's handler (141, quietly)."""
    raise BrokenPipeError(32, "stdout is closed")


def _sessions_parser():
    # lazy: session.transfer only for atomic sessions
    from atomic_host.session import transfer

    # import/export are session/transfer.py's own parser (it runs them); list is added to it here.
    parser = transfer._parser()
    parser.description = "List the current project's sessions, or copy sessions between the JSONL and SQLite stores."
    parser.epilog = "Run `atomic sessions ACTION --help` for an action's options."
    actions = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    listing = actions.add_parser(
        "list",
        help="list the sessions of the current project, newest first",
        description="List the sessions of the current project (the working directory), newest first.",
    )
    listing.add_argument("--json", action="store_true", help="print the session records as JSON")
    listing.add_argument("--all", action="store_true", help="every project, not just the current one")
    listing.add_argument("--session-dir", metavar="DIR", help="directory that holds the session store")
    listing.add_argument("--session-store", metavar="KIND", help="session store kind (default: jsonl)")
    for name, text in (("import", "copy JSONL sessions into the SQLite store"),
                       ("export", "copy SQLite sessions out to JSONL files")):  # fmt: skip
        actions._choices_actions.append(argparse.Action([], dest=name, help=text, metavar=name))
        for action in actions.choices[name]._actions:  # flags transfer.py leaves without help
            action.help = action.help or _TRANSFER_HELP.get(action.dest)
    return parser


_TRANSFER_HELP = {
    "src": "store to copy from",
    "dst": "store to copy to",
    "agent_dir": "agent directory (default: $ATOMIC_CODING_AGENT_DIR or ~/.atomic/agent)",
}


def sessions(argv: list[str]) -> int:
    """``atomic sessions list|import|export``."""
    ns = _sessions_parser().parse_args(argv)
    if ns.action == "list":
        return list_sessions(ns)
    # lazy: session.transfer only for atomic sessions
    from atomic_host.session.transfer import main

    rt = _runtime(Options())
    rt.load_plugins()  # the store kinds are plugin contributions
    return main(argv, rt.store_kinds.items)


def list_sessions(ns) -> int:
    """One line per session: modified time, id, message count, name or first message."""
    rt = _runtime(Options(session_dir=ns.session_dir, session_store=ns.session_store))
    rt.load_plugins()  # the store kinds are plugin contributions
    infos = rt.store.list_all() if ns.all else rt.store.list(rt.cwd)
    infos.sort(key=lambda i: i.get("modified") or "", reverse=True)
    if ns.json:
        print(json.dumps(infos, indent=2))
        return 0
    if not infos:
        where = "any project" if ns.all else rt.cwd
        print(f"No sessions for {where} (in {rt.agent_dir}).", file=sys.stderr)
        return 0
    for info in infos:
        title = info.get("name") or (info.get("firstMessage") or "").replace("\n", " ")
        title = title[:70] + "…" if len(title) > 71 else title
        modified = str(info.get("modified") or "")[:19].replace("T", " ")
        line = f"{modified}  {info.get('id')}  {info.get('messageCount', 0):>4} msgs  {title}"
        print(line + (f"  ({info.get('cwd')})" if ns.all else ""))
    return 0


def _login_parser():
    return argparse.ArgumentParser(
        prog="atomic login",
        description="Sign in to PROVIDER or store an API key for it in auth.json (a private file in the agent "
        "directory). A provider with a subscription sign-in (github-copilot, openai-codex, anthropic with "
        "--oauth, or one an extension adds) runs it here: the URL or device code is printed to stderr and "
        "answers are read from stdin. Otherwise the key is read from --api-key, from piped stdin, or asked "
        "for without echo.",
        epilog="Without --oauth or --api-key: a provider that only signs in with OAuth does so; one that takes "
        "both asks which on a terminal, and reads a key from piped stdin.",
    )


def login(argv: list[str]) -> int:
    """``atomic login PROVIDER``: run the provider's OAuth sign-in in the terminal, or store an API
    key in auth.json (from --api-key, stdin or a prompt)."""
    # lazy: getpass only for atomic login
    import getpass

    p = _login_parser()
    p.add_argument("provider", help="provider id, e.g. anthropic, openai or github-copilot")
    method = p.add_mutually_exclusive_group()
    method.add_argument("--api-key", help="the key (visible in the process list: prefer stdin or the prompt)")
    method.add_argument("--oauth", action="store_true", help="sign in with the provider's OAuth login")
    p.add_argument("--no-browser", action="store_true", help="print the sign-in URL only, never open a browser")
    ns = p.parse_args(argv)
    rt = _runtime(Options())
    rt.load_plugins()
    info = rt.models.provider_info(ns.provider)
    if info is None:
        # lazy: frontends.hints only for an unknown provider
        from atomic_host.frontends.hints import named_providers

        known = ", ".join(named_providers(rt.models))
        print(f"atomic: unknown provider {ns.provider!r}; known providers: {known}", file=sys.stderr)
        return 2
    oauth = rt.models.oauth_login(ns.provider)
    if ns.oauth and oauth is None:
        print(f"atomic: {ns.provider} has no OAuth sign-in; store an API key instead", file=sys.stderr)
        return 2
    use_oauth = oauth is not None and ns.api_key is None and (ns.oauth or not info.env_keys)
    if oauth is not None and not use_oauth and ns.api_key is None and os.isatty(0):
        sys.stderr.write(f"1) sign in with {oauth.name}\n2) store an API key\nChoose [1]: ")
        sys.stderr.flush()
        use_oauth = sys.stdin.readline().strip() in ("", "1")
    if use_oauth:
        return _oauth_login(rt, ns.provider, open_browser=not ns.no_browser)
    key = ns.api_key
    if key is None:
        key = getpass.getpass(f"{ns.provider} API key: ") if os.isatty(0) else sys.stdin.readline()
    key = key.strip()
    if not key:
        print("atomic: no key given", file=sys.stderr)
        return 2
    rt.models.login(ns.provider, key)
    print(f"Stored the {ns.provider} key in {rt.models.auth_path}", file=sys.stderr)
    return 0


def _oauth_login(rt, provider: str, *, open_browser: bool) -> int:
    """Run ``provider``'s OAuth flow with a :class:`~atomic_host.frontends.login_terminal.TerminalLoginUI`
    and store the credential; 0 on success, 1 when it failed or was cancelled, 130 on Ctrl-C."""
    # lazy: the OAuth flow's modules, for atomic login only (atomic schema loads none of them)
    import asyncio

    from atomic_host.contract.providers import LoginCancelled
    from atomic_host.core.models.auth_oauth import endpoint_overrides, resolve_flow
    from atomic_host.frontends.login_terminal import StdinLines, TerminalLoginUI, browser_opener

    login = rt.models.oauth_login(provider)
    ui = TerminalLoginUI(sys.stderr, StdinLines(sys.stdin), browser_opener() if open_browser else None)

    async def run() -> dict:
        flow = resolve_flow(login)
        return await flow.login(ui, endpoint_overrides(provider, rt.models.env))

    print(f"Signing in to {login.name}...", file=sys.stderr)
    try:
        credential = asyncio.run(run())
    except KeyboardInterrupt:
        print("\natomic: login cancelled", file=sys.stderr)
        return 130
    except LoginCancelled:
        print("atomic: login cancelled", file=sys.stderr)
        return 1
    except Exception as exc:  # the flow's error is the message (OAuthError, an extension's own)
        print(f"atomic: login to {provider} failed: {exc or type(exc).__name__}", file=sys.stderr)
        return 1
    try:
        rt.models.save_credential(provider, {"type": "oauth", **credential})
    except ValueError as exc:
        print(f"atomic: {provider} returned an unusable credential: {exc}", file=sys.stderr)
        return 1
    print(f"Signed in to {login.name}; the token is stored in {rt.models.auth_path}", file=sys.stderr)
    return 0


def worker(argv: list[str]) -> int:
    """``atomic worker [PROJECT ...]``: run workflow stages with no client attached."""
    # lazy: frontends.worker only for atomic worker
    from atomic_host.frontends.worker import worker as run

    return run(argv, _runtime)


def list_models(opts: Options) -> int:
    rt = _runtime(opts)
    rt.load_plugins()
    available = rt.models.available()
    for m in available:
        print(
            f"{m['provider']}/{m['id']}\tcontext {m['contextWindow']}\tmax {m['maxTokens']}"
            f"\t{'reasoning' if m.get('reasoning') else ''}"
        )
    if not available:
        # lazy: frontends.hints only when no model is available
        from atomic_host.frontends.hints import key_hint

        print(f"atomic: no models available. {key_hint(rt.models, opts.provider)}", file=sys.stderr)
    return 0


def export_session(opts: Options, args: list[str], export_format: str = "html") -> int:
    """``atomic --export SESSION [OUTPUT] [--export-format NAME]``: write a session through the
    registered exporter ``NAME`` and print the path."""
    # lazy: --export's own modules (atomic schema loads none of them)
    from atomic_host.contract.errors import HostError
    from atomic_host.engine.agent_session import open_session_ref
    from atomic_host.session.export import export_session as write_export

    rt = _runtime(opts)
    rt.load_plugins()  # exporters and store kinds are plugin contributions
    _ = rt.models  # registers models.json credentials too (env and auth.json ones are known already)
    try:
        exporter = rt.exporter(export_format)
        session = open_session_ref(rt.store, args[0])
    except HostError as exc:
        print(f"atomic: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        print(f"atomic: cannot open session {args[0]}: {exc}", file=sys.stderr)
        return 1
    try:
        path = write_export(exporter, session, args[1] if len(args) > 1 else None, os.getcwd())
    except HostError as exc:
        print(f"atomic: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0
