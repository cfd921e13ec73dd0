"""A serving host's plain command line read without argparse: argparse's import and parser build (startup bar).

``atomic --mode rpc --provider p --model m --no-session`` is how clients start the host, every
time; building the argparse parser (and importing argparse) was a visible share of a start
(figures: docs/performance.md). This reads exactly those command lines, from a second table of the
options ``frontends/cli.py`` ``build_parser`` declares, and declines everything else, which
argparse then reads with its own behaviour and messages. ``tests/perf/startup_imports/test_si_quick_paths.py``
holds it to argparse on generated command lines.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from atomic_host.kit.permission_modes import MODES

VALUE = {
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
    "--permission-mode": "permission_mode",
}
"""Options taking one value that :func:`quick_values` reads: flag → ``Options`` field."""
FLAG = {
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
APPEND = frozenset({"extensions", "prompt_templates", "skills"})
CSV = frozenset({"models", "tools", "exclude_tools"})
CHOICES = {
    "mode": ("rpc", "acp"),
    "permission_mode": MODES,
    "thinking": ("off", "minimal", "low", "medium", "high", "xhigh", "max"),
}
"""Only the serving modes: print/json need -p and its print-mode flags, which take the full parser."""


def quick_values(argv: list[str], csv: Callable[[str], list[str]]) -> dict[str, Any] | None:
    """The option values ``frontends/cli.py``'s argparse parser reads from the plain command lines
    of a serving host (``--mode rpc --model p/m --no-session …``), as ``Options`` fields (``csv``:
    how a comma-separated list option is split); None for anything else (help, print mode,
    subcommands, ``--opt=value``, abbreviations, a value that starts with ``-``, a choice argparse
    would refuse, ``--approve`` with ``--no-approve``), which then goes through argparse."""
    values: dict[str, Any] = {"extensions": [], "prompt_templates": [], "skills": [], "exclude_tools": []}
    i, n = 0, len(argv)
    while i < n:
        arg = argv[i]
        flag = FLAG.get(arg)
        if flag is not None:
            key, value = flag
            if key == "approve" and values.get(key, value) != value:
                return None  # mutually exclusive: argparse's error
            values[key] = value
            i += 1
            continue
        key = VALUE.get(arg)
        if key is None or i + 1 >= n or argv[i + 1].startswith("-"):
            return None
        value = argv[i + 1]
        if key in CHOICES and value not in CHOICES[key]:
            return None
        if key in APPEND:
            values[key].append(value)
        else:
            values[key] = csv(value) if key in CSV else value
        i += 2
    values.setdefault("mode", "rpc")
    return values


class QuickNamespace:
    """What ``cli.main`` reads of argparse's namespace, for a :func:`quick_values` command line."""

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
