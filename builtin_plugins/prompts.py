"""Built-in plugin "prompts": ``/name args`` prompt templates from Markdown files (semantics §5.4).

Templates come from ``<agentDir>/prompts/*.md`` (location ``user``), ``<cwd>/.atomic/prompts/*.md``
(``project``, trusted projects only), then the ``prompts`` setting and ``--prompt-template``
(``path``: files or directories, non-recursive). The first template of a name wins. Expanding
replaces ``$1``, ``$@``, ``$ARGUMENTS``, ``${N:-default}``, ``${@:-default}``, ``${@:N}`` and
``${@:N:L}`` in the body (frontmatter stripped) with the shell-like split arguments.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_host import hookimpl
from atomic_host.contract.commands import SlashCommand
from atomic_host.kit.log import log

if TYPE_CHECKING:
    from atomic_host.contract.host import HostAPI

DESCRIPTION_CHARS = 60

# One pass over every form, so text substituted from an argument is never substituted again. A
# pattern string, compiled (and cached by ``re``) on the first expansion instead of at every start.
_PLACEHOLDER = (
    r"\$\{(?P<bn>\d+):-(?P<bnd>[^}]*)\}"  # ${N:-default}
    r"|\$\{@:-(?P<bad>[^}]*)\}"  # ${@:-default}
    r"|\$\{@:(?P<start>\d+)(?::(?P<len>\d+))?\}"  # ${@:N} / ${@:N:L}
    r"|\$ARGUMENTS|\$@"
    r"|\$(?P<n>\d+)"
)


_ARG_PIECE = r"""'([^']*)'?|"([^"]*)"?|([ \t\n]+)|([^'" \t\n]+)"""
"""A quoted run (to its closing quote or the end), whitespace, or unquoted text (compiled and
cached by ``re`` on the first split)."""


def split_args(text: str) -> list[str]:
    """Split like a shell, minus escapes: whitespace separates, '…' and "…" group.

    An empty quoted word adds nothing (as in the reference host).

    Read in runs, not character by character with ``word += ch``: that is linear only while
    CPython grows the string in place, and under a profiler, debugger or coverage a pasted 1 MB
    argument took 11 s (every character copied the word so far).
    """
    args: list[str] = []
    word: list[str] = []
    for match in re.finditer(_ARG_PIECE, text):
        if match.lastindex == 3:
            if word:
                args.append("".join(word))
                word = []
        elif piece := match[match.lastindex or 0]:
            word.append(piece)
    if word:
        args.append("".join(word))
    return args


def substitute_args(body: str, args: list[str]) -> str:
    """Replace the placeholders of ``body`` with ``args``; a missing positional becomes ''."""

    def positional(n: str) -> str:
        index = int(n) - 1
        return args[index] if 0 <= index < len(args) else ""

    def replace(m: re.Match[str]) -> str:
        if m.group("bn") is not None:
            return positional(m.group("bn")) or m.group("bnd")
        if m.group("bad") is not None:
            return " ".join(args) if args else m.group("bad")
        if m.group("start") is not None:
            start = max(int(m.group("start")) - 1, 0)
            if m.group("len") is not None:
                return " ".join(args[start : start + int(m.group("len"))])
            return " ".join(args[start:])
        if m.group("n") is not None:
            return positional(m.group("n"))
        return " ".join(args)  # $@ / $ARGUMENTS

    return re.sub(_PLACEHOLDER, replace, body)


def first_line_description(body: str) -> str | None:
    """The first non-empty line, cut at 60 characters (then ``...``)."""
    for line in body.split("\n"):
        if line.strip():
            return line[:DESCRIPTION_CHARS] + ("..." if len(line) > DESCRIPTION_CHARS else "")
    return None


def make_expander(path: Path) -> Callable[[str], str]:
    """Expansion reads the file on each use, so an edited template applies without a reload."""

    def expand(args: str) -> str:
        # lazy: builtin_plugins.frontmatter is off startup's path (the first template read loads it)
        from builtin_plugins.frontmatter import strip_frontmatter

        body = strip_frontmatter(path.read_text(encoding="utf-8", errors="replace"))
        return substitute_args(body, split_args(args))

    return expand


def load_template(path: Path, location: str) -> SlashCommand | None:
    # lazy: builtin_plugins.frontmatter is off startup's path (the first template read loads it)
    from builtin_plugins.frontmatter import split_frontmatter

    try:
        meta, body = split_frontmatter(path.read_text(encoding="utf-8", errors="replace"))
    except OSError as exc:
        log.warning(f"prompt template {path}: {exc}")
        return None
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        description = first_line_description(body)
    return SlashCommand(
        path.stem,
        description=description,
        path=str(path),
        source="prompt",
        location=location,
        expand=make_expander(path),
    )


def markdown_files(path: Path) -> list[Path]:
    """``path`` itself if it is a file, else its ``*.md`` files (sorted, non-recursive)."""
    if path.is_file():
        return [path]
    if path.is_dir():
        return sorted(p for p in path.glob("*.md") if p.is_file())
    return []


def explicit_paths(api: HostAPI, setting: str, option: str) -> list[Path]:
    """Paths from a settings list and a repeatable CLI option; relative ones are against cwd."""
    value = api.settings.get(setting) or []
    raw: list[Any] = [value] if isinstance(value, str) else list(value)
    options = getattr(api, "options", None)
    raw += list(getattr(options, option, None) or [])
    paths = []
    for item in raw:
        if isinstance(item, str) and item.strip():
            p = Path(item).expanduser()
            paths.append(p if p.is_absolute() else Path(api.cwd) / p)
    return paths


def template_sources(api: HostAPI) -> Iterable[tuple[Path, str]]:
    """``(file, location)`` in precedence order: user, project (trusted), explicit."""
    for f in markdown_files(Path(api.agent_dir) / "prompts"):
        yield f, "user"
    if api.trusted:
        for f in markdown_files(Path(api.cwd) / ".atomic" / "prompts"):
            yield f, "project"
    for p in explicit_paths(api, "prompts", "prompt_templates"):
        if not p.exists():
            log.warning(f"prompt template path not found: {p}")
        for f in markdown_files(p):
            yield f, "path"


def load_templates(api: HostAPI) -> list[SlashCommand]:
    """Every template, first of a name wins (the same file reached twice counts once)."""
    found: dict[str, SlashCommand] = {}
    for path, location in template_sources(api):
        if path.stem in found:
            continue
        command = load_template(path.resolve(), location)
        if command is not None:
            found[path.stem] = command
    return list(found.values())


@hookimpl
def register_commands(register: Callable[[SlashCommand], None], api: HostAPI) -> None:
    for command in load_templates(api):
        register(command)
