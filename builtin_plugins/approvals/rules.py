"""Permission rules in Claude Code's syntax: ``Tool`` or ``Tool(specifier)`` (docs/permissions.md).

- Tool names compare case-insensitively. ``Edit`` also covers ``write``; ``Read`` covers ``read``,
  ``ls``, ``find`` and ``search``; ``Grep`` is ``search``, ``Glob`` is ``find``, ``LS`` is ``ls``.
  ``mcp__server`` covers every tool of that MCP server; ``*`` in a tool name is a wildcard.
- ``Bash(spec)``: ``*`` matches any text (spaces too); ``npm test:*`` (and ``ls *``, a single
  trailing wildcard after a space) also match the bare command: a prefix at a word boundary. Deny and
  ask rules match the whole command or any of its subcommands; an allow rule must cover every
  subcommand, none of which may write a file by redirection, and never covers a command with
  ``$(…)`` or backticks.
- File tools: a gitignore-style path. ``//abs/path``, ``~/in/home``, ``/from/the/project``,
  ``rel/path`` or ``./rel`` (from the project), ``name`` without a slash (that name at any depth
  in the project). ``*`` matches within a path segment, ``**`` any number of segments; a trailing
  ``/`` means everything under it. Symlinks are resolved too: a deny matches either path, an allow
  must match both.
- Any other tool: ``*``-wildcards over its arguments as compact JSON with sorted keys.

Every match is linear in the text matched (``*`` is found with ``str.find``, never a backtracking
regular expression): a model cannot make the gate slow with a long command or path.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any
from urllib.parse import unquote, urlsplit

from atomic_host.contract.records import record
from atomic_host.kit.proposed import tool_path
from builtin_plugins.approvals import shell

ALIASES: dict[str, frozenset[str]] = {
    "edit": frozenset({"edit", "write"}),
    "read": frozenset({"read", "ls", "find", "search"}),
    "grep": frozenset({"search"}),
    "glob": frozenset({"find"}),
}
"""Claude Code's tool names that cover several of ours."""

CANONICAL = {
    "bash": "Bash", "edit": "Edit", "write": "Write", "read": "Read", "ls": "LS", "find": "Glob", "search": "Grep",
}  # fmt: skip
"""How a rule written for one of the built-in tools names it (``scope``)."""

PATH_TOOLS = frozenset({"read", "write", "edit", "ls", "find", "search"})
DEFAULT_PATH = {"ls": ".", "find": ".", "search": "."}
_TOOL = re.compile(r"[A-Za-z0-9_.*-]+")
_SCHEME = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]{0,31})://(?P<rest>.*)$", re.S)
"""A URL's scheme, as read tells a URL from a path."""
WEB_SCHEMES = ("http", "https")
WEB_TOOL = "webfetch"
"""Claude Code's WebFetch: a rule of that name covers ``read`` calls of URLs, and only those."""
MAX_PATH_CHARS = 4096
"""PATH_MAX on Linux: no longer path names a file."""
MAX_RULE_CHARS = 10_000


class RuleError(ValueError):
    """A rule that cannot be read; the message says why."""


@record
class Rule:
    """One parsed rule. ``literal`` (a session approval): the specifier is an exact path or a
    command prefix (``prefix``), not a pattern."""

    text: str
    tool: str
    spec: str | None
    source: str
    """user | project | acp | session"""
    root: str = ""
    """The project directory: where relative path patterns start."""
    literal: bool = False
    prefix: bool = False


@record
class Call:
    """A tool call as the rules see it, prepared once per call."""

    name: str
    args: dict[str, Any]
    command: shell.Command | None = None
    path: str | None = None
    """A file tool's path, absolute and normalised (None: it gave none that can be read)."""
    paths: list[str] | None = None
    """A file tool's path as given and with symlinks resolved (one entry when they agree)."""
    text: str | None = None
    """The arguments as compact JSON (other tools); a ``read`` of a URL: the URL."""
    host: str | None = None
    """A ``read`` of an ``http(s)`` URL: its host, lower-cased (``WebFetch(domain:…)`` rules)."""

    @property
    def web(self) -> bool:
        """Whether this is a ``read`` of an ``http(s)`` URL (Claude Code's WebFetch)."""
        return self.name == "read" and self.text is not None


def parse_rule(text: Any, source: str, root: str) -> Rule:
    """``Tool`` or ``Tool(specifier)``; :class:`RuleError` for anything else."""
    if not isinstance(text, str):
        raise RuleError(f"a rule is a string, not {type(text).__name__}")
    if len(text) > MAX_RULE_CHARS:
        raise RuleError(f"a rule is at most {MAX_RULE_CHARS} characters")
    stripped = text.strip()
    name, paren, rest = stripped.partition("(")
    if not _TOOL.fullmatch(name):
        raise RuleError(f"{text!r} does not start with a tool name")
    spec = None
    if paren:
        if not rest.endswith(")"):
            raise RuleError(f"{text!r} has no closing parenthesis")
        spec = rest[:-1]
        if not spec:
            raise RuleError(f"{text!r} has an empty specifier (write {name} for every call)")
        if spec == "*":
            spec = None
    return Rule(text, name.lower(), spec, source, root)


def prepare(name: str, args: dict[str, Any], cwd: str) -> Call:
    """What the rules need of a call (touches the disk for symlinks: call it off the event loop)."""
    call = Call(name, args)
    if name == "bash":
        command = args.get("command")
        call.command = shell.parse(command) if isinstance(command, str) else shell.Command("", [], True)
    elif name in PATH_TOOLS:
        raw = args.get("path", DEFAULT_PATH.get(name))
        url = web_url(raw) if name == "read" else None
        if url is not None:
            call.text, call.host = url, _host(url)
            return call
        found = read_paths(raw, cwd) if name == "read" and isinstance(raw, str) else [tool_path(raw, cwd)]
        call.path = found[0] if found else None
        call.paths = sorted({q for p in found if p is not None for q in (p, _resolved(p))})
    else:
        call.text = json.dumps(args, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return call


def web_url(raw: Any) -> str | None:
    """A ``read`` path that is an ``http(s)`` URL (``@`` dropped, as read drops it), else None."""
    if not isinstance(raw, str):
        return None
    text = raw[1:] if raw.startswith("@") else raw
    scheme = _SCHEME.match(text)
    return text if scheme is not None and scheme["scheme"].lower() in WEB_SCHEMES else None


def _host(url: str) -> str | None:
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    return host.lower().rstrip(".") if host else None


def read_paths(raw: str, cwd: str) -> list[str]:
    """Every local file a ``read`` of ``raw`` may open, the path as given first. read splits a path
    where a prefix names an existing file: ``.env:raw``, ``.env:1-5``, ``a.zip:member``,
    ``a.zip/member``, ``db.sqlite?q=…``, ``db.sqlite:table``; ``@`` is dropped and ``file://`` read
    as a path. A plugin's resource (``skill://``, ``artifact://``) has none: only a rule without a
    specifier (``Read``) covers it (a URL is no path: :func:`web_url`). Touches the disk (one ``stat`` per
    separator in the first :data:`MAX_PATH_CHARS` characters: no longer prefix can name a file)."""
    text = raw[1:] if raw.startswith("@") else raw
    scheme = _SCHEME.match(text)
    if scheme is not None:
        if scheme["scheme"].lower() != "file":
            return []
        text = unquote(scheme["rest"])
    whole = tool_path("@" + text, cwd)  # tool_path drops one "@": read dropped its own already
    if whole is None:
        return []
    found = [whole]
    for i, ch in enumerate(text[: MAX_PATH_CHARS + 1]):
        if ch not in ":/?" or i == 0:
            continue
        prefix = tool_path("@" + text[:i], cwd)
        if prefix is not None and prefix != whole and _is_file(prefix, dirs=ch != "/"):
            found.append(prefix)
    return found


def _is_file(path: str, *, dirs: bool) -> bool:
    """Whether ``path`` names a regular file (or, with ``dirs``, a directory)."""
    try:
        return os.path.isfile(path) or (dirs and os.path.isdir(path))
    except (OSError, ValueError):
        return False


def _resolved(path: str) -> str:
    """``path`` with symlinks resolved; as it is when it cannot be (a NUL byte: the tool refuses it)."""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return path


def covers(rule: Rule, call: Call) -> bool:
    """Whether ``rule`` names ``call``'s tool (a ``WebFetch`` rule: a ``read`` of a URL)."""
    if rule.tool == WEB_TOOL:
        return call.web
    return covers_tool(rule, call.name)


def covers_tool(rule: Rule, name: str) -> bool:
    tool, name = rule.tool, name.lower()
    if rule.literal:  # a session approval: that tool only
        return name == tool
    if "*" in tool:
        return star_match(tool, name)
    if tool in ALIASES:
        return name in ALIASES[tool]
    if tool.startswith("mcp__") and tool.count("__") == 1:
        return name.startswith(tool + "__")
    return name == tool


def matches(rule: Rule, call: Call) -> bool:
    """Whether deny or ask ``rule`` applies to ``call`` (to any part of it)."""
    if not covers(rule, call):
        return False
    if rule.spec is None:
        return True
    if call.web:
        return _web_matches(rule, call)
    if call.command is not None:
        command = call.command
        return _spec_matches(rule, command.whole) or any(_spec_matches(rule, part.text) for part in command.parts)
    if call.paths is not None:
        return any(_path_matches(rule, p) for p in call.paths)
    return call.text is not None and star_match(rule.spec, call.text)


def allowed(rules: list[Rule], call: Call) -> bool:
    """Whether the allow rules ``rules`` cover all of ``call``."""
    if call.command is not None:
        return not uncovered(rules, call.command)
    for rule in rules:
        if not covers(rule, call):
            continue
        if rule.spec is None or (call.web and _web_matches(rule, call)):
            return True
        if call.paths:
            hits = [_path_matches(rule, p) for p in call.paths]
            if any(hits) if rule.literal else all(hits):
                return True
        elif call.text is not None and not rule.literal and star_match(rule.spec, call.text):
            return True
    return False


def uncovered(rules: list[Rule], command: shell.Command) -> list[shell.Subcommand]:
    """The subcommands of a ``bash`` command that the allow rules ``rules`` do not cover: every one
    when it is opaque (unless allowed for the session as a whole), one that writes a file by
    redirection unless ``Bash`` allows all or it was allowed exactly."""
    rules = [r for r in rules if covers_tool(r, "bash")]
    if any(r.spec is None for r in rules):
        return []
    if command.opaque or not command.parts:
        if any(r.literal and r.spec == command.whole for r in rules):  # allowed for the session as a whole
            return []
        return list(command.parts) or [shell.Subcommand(command.whole)]
    return [p for p in command.parts if not any(_covers(r, p) for r in rules)]


def _covers(rule: Rule, part: shell.Subcommand) -> bool:
    """An allow rule covers a subcommand that writes a file only when it names it exactly, without
    a wildcard (``Bash(make > build.log)``, or a session approval of that very subcommand)."""
    if part.writes:
        exact = not rule.prefix if rule.literal else "*" not in (rule.spec or "*")
        return exact and rule.spec == part.text
    return _spec_matches(rule, part.text)


def _spec_matches(rule: Rule, text: str) -> bool:
    spec = rule.spec or ""
    if rule.literal:
        return text == spec or (rule.prefix and text.startswith(spec + " "))
    if spec.endswith(":*"):  # the legacy prefix form
        head = spec[:-2]
        return text == head or star_match(head + " *", text)
    if spec.endswith(" *") and spec.count("*") == 1 and text == spec[:-2]:
        return True
    return star_match(spec, text)


def _web_matches(rule: Rule, call: Call) -> bool:
    """``domain:HOST`` (``*`` a wildcard: ``domain:*.example.com``) against the URL's host, any
    other specifier as a ``*``-pattern over the whole URL."""
    spec = rule.spec or ""
    if rule.literal:  # a session approval: that very host
        return call.host is not None and spec == f"domain:{call.host}"
    if spec.startswith("domain:"):
        return call.host is not None and star_match(spec[7:].strip().lower().rstrip("."), call.host)
    return call.text is not None and star_match(spec, call.text)


def _path_matches(rule: Rule, path: str) -> bool:
    if rule.literal:
        return path == rule.spec
    return segments_match(path_pattern(rule.spec or "", rule.root), path.split("/"))


def path_pattern(spec: str, root: str) -> list[str]:
    """A path pattern as absolute path segments (see the module docstring)."""
    if spec.startswith("//"):
        full = spec[1:]
    elif spec.startswith("~/"):
        full = os.path.expanduser("~") + spec[1:]
    elif spec.startswith("/"):
        full = root + spec
    elif "/" not in spec.rstrip("/"):
        full = f"{root}/**/{spec}"
    else:
        full = f"{root}/{spec}"
    under = full.endswith("/")
    full = os.path.normpath(full) + ("/**" if under else "")
    segments = [s for s in full.split("/") if s]
    return ["", *segments]


def star_match(pattern: str, text: str) -> bool:
    """``*`` matches any run of characters (none included); everything else is literal. Linear in
    ``text`` per literal piece: each is found with ``str.find``, left to right (the first place a
    piece fits is never worse than a later one)."""
    pieces = pattern.split("*")
    if len(pieces) == 1:
        return pattern == text
    first, last = pieces[0], pieces[-1]
    if len(first) + len(last) > len(text) or not text.startswith(first) or not text.endswith(last):
        return False
    pos, end = len(first), len(text) - len(last)
    for piece in pieces[1:-1]:
        found = text.find(piece, pos, end)
        if found < 0:
            return False
        pos = found + len(piece)
    return True


def segments_match(pattern: list[str], segments: list[str]) -> bool:
    """Path segments against pattern segments: ``**`` matches any number of segments, any other
    pattern segment one segment (:func:`star_match`). Greedy with a return to the last ``**``: at
    most ``len(pattern) * len(segments)`` segment comparisons."""
    p = s = 0
    back_p, back_s = -1, 0
    while s < len(segments):
        if p < len(pattern) and pattern[p] == "**":
            back_p, back_s = p, s
            p += 1
        elif p < len(pattern) and star_match(pattern[p], segments[s]):
            p += 1
            s += 1
        elif back_p >= 0:
            back_s += 1
            p, s = back_p + 1, back_s
        else:
            return False
    while p < len(pattern) and pattern[p] == "**":
        p += 1
    return p == len(pattern)
