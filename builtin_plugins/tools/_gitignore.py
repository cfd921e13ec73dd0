"""A .gitignore matcher with git's semantics and a pruning directory walker for find/search/ls.

Pure standard library (the ``search`` worker process imports it without the host). Follows
git's ``dir.c`` and ``wildmatch.c``: ``#`` comments, ``!`` negation, trailing spaces dropped
unless escaped, one trailing ``/`` for directories only, a pattern with a ``/`` elsewhere is
anchored to its file's directory (else it matches the name at any depth), ``*``, ``?``,
``[...]`` with ranges, ``!``/``^`` negation and ``[:class:]`` names, ``**`` as a whole path
segment, backslash escapes, nested ``.gitignore`` files (deeper files win, later lines win)
and ``info/exclude`` (also for worktrees). A directory that is ignored is not entered, so (as
in git) nothing below it can be re-included, and a rule is only ever matched against the
entry itself.

Patterns are compiled to regular expressions that cannot backtrack badly: every ``*`` but the
last of a segment and every floating ``**`` block is an atomic group (the leftmost match is
always the right one for glob wildcards), so a hostile ``*a*a*a*a*a*b`` costs linear time
instead of hours with the GIL held.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ALWAYS_PRUNE = frozenset({".git", "node_modules"})

_NEVER = "(?!)"
_POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


class _Invalid(Exception):
    """The pattern can never match (git: WM_ABORT_ALL), e.g. an unterminated ``[``."""


@dataclass(frozen=True)
class Rule:
    """One compiled .gitignore line."""

    regex: re.Pattern[str]
    negate: bool
    dir_only: bool
    basename: bool
    """Matched against the entry's name (no ``/`` in the pattern), else its path from the base."""
    pattern: str


# --- glob → regex -------------------------------------------------------------------------


def _class_char(c: str) -> str:
    return "\\" + c if c in "\\]^-[" else c


def _parse_class(pat: str, i: int) -> tuple[str, int]:
    """``pat[i] == "["``: the regex for the bracket expression and the index after its ``]``."""
    n = len(pat)
    i += 1
    negated = False
    if i < n and pat[i] in "!^":
        negated, i = True, i + 1
    items: list[str] = []
    prev: str | None = None  # the last single character, a possible range start
    first = True
    while True:
        if i >= n:
            raise _Invalid
        c = pat[i]
        if c == "]" and not first:
            break
        first = False
        if c == "\\":
            i += 1
            if i >= n:
                raise _Invalid
            c = pat[i]
            items.append(_class_char(c))
            prev = c
        elif c == "-" and prev is not None and i + 1 < n and pat[i + 1] != "]":
            i += 1
            end = pat[i]
            if end == "\\":
                i += 1
                if i >= n:
                    raise _Invalid
                end = pat[i]
            items.pop()  # the range replaces its start character
            if prev <= end:
                items.append(f"{_class_char(prev)}-{_class_char(end)}")
            prev = None
        elif c == "[" and i + 1 < n and pat[i + 1] == ":":
            close = pat.find("]", i + 2)
            if close < 0:
                raise _Invalid
            if pat[close - 1] != ":" or close - 1 < i + 2:
                items.append("\\[")  # no ":]": a plain "["
                prev = "["
            else:
                name = pat[i + 2 : close - 1]
                if name not in _POSIX_CLASSES:
                    raise _Invalid
                items.append(_POSIX_CLASSES[name])
                prev = None
                i = close
        else:
            items.append(_class_char(c))
            prev = c
        i += 1
    body = "".join(items)
    if negated:
        return f"[^/{body}]", i + 1
    # A bracket expression never matches "/" (git: WM_PATHNAME), even through a range like [!-0].
    return (f"(?!/)[{body}]" if body else _NEVER), i + 1


def _segment_tokens(seg: str) -> list[str | None]:
    """Tokens of one path segment: regex pieces for single characters, ``None`` for a star."""
    out: list[str | None] = []
    i, n = 0, len(seg)
    while i < n:
        c = seg[i]
        if c == "*":
            if not out or out[-1] is not None:
                out.append(None)
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            piece, i = _parse_class(seg, i)
            out.append(piece)
        elif c == "\\":
            if i + 1 >= n:
                raise _Invalid  # git: a pattern ending in a backslash never matches
            out.append(re.escape(seg[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return out


def _segment_regex(seg: str) -> str:
    """Regex matching exactly one path segment (no ``/``); linear whatever the stars."""
    tokens = _segment_tokens(seg)
    pieces: list[str] = [""]
    for t in tokens:
        if t is None:
            pieces.append("")
        else:
            pieces[-1] += t
    if len(pieces) == 1:
        return pieces[0]
    head, *middle, tail = pieces
    # Leftmost match of each fixed-length piece between stars is always right; atomic groups
    # make the engine commit to it instead of retrying every split.
    return head + "".join(f"(?>[^/]*?{m})" for m in middle) + "[^/]*" + tail


def _split_segments(pat: str) -> list[str]:
    """Split on ``/`` (an escaped ``\\/`` is a slash too), keeping escapes inside segments."""
    segs, cur, i = [], "", 0
    while i < len(pat):
        c = pat[i]
        if c == "\\" and i + 1 < len(pat):
            if pat[i + 1] == "/":
                segs.append(cur)
                cur = ""
            else:
                cur += pat[i : i + 2]
            i += 2
            continue
        if c == "[":  # a "/" inside brackets never matches, but must not split the class
            try:
                _, end = _parse_class(pat, i)
            except _Invalid:
                end = i + 1
            if "/" in pat[i:end]:
                cur += pat[i:end]
                i = end
                continue
        if c == "/":
            segs.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    segs.append(cur)
    return segs


def path_glob_regex(pat: str) -> str:
    """Regex (with ``\\Z``) for a glob matched against a whole ``/``-separated relative path.

    ``*`` and ``?`` stay inside a segment; a segment of two or more stars only is ``**``: zero
    or more segments (one or more at the end). Raises ``_Invalid`` for a pattern that never matches.
    """
    segs = _split_segments(pat)
    items: list[str | None] = []  # segment regexes; None = "**"
    for seg in segs:
        # Two or more stars filling a segment are "**" (git's wildmatch); a lone "*" is not:
        # "y/*" matches y's entries, never deeper paths.
        if len(seg) >= 2 and set(seg) == {"*"}:
            if not items or items[-1] is not None:
                items.append(None)
        else:
            items.append(_segment_regex(seg))
    leading = bool(items) and items[0] is None
    trailing = (len(items) > 1 and items[-1] is None) or items == [None]
    blocks: list[list[str]] = []
    current: list[str] = []
    for item in items:
        if item is None:
            if current:
                blocks.append(current)
            current = []
        else:
            current.append(item)
    if current:
        blocks.append(current)
    if not blocks:
        return ".+\\Z"
    out = []
    for idx, block in enumerate(blocks):
        body = "/".join(block)
        last = idx == len(blocks) - 1
        floating = idx > 0 or leading
        if not floating:
            out.append(body + ("" if last and not trailing else "/"))
        elif not last or trailing:
            # A block between two "**": its leftmost segment-aligned occurrence is the right one.
            out.append(f"(?>(?:[^/]*/)*?{body}/)")
        else:
            out.append(f"(?:[^/]*/)*{body}")
    if trailing:
        out.append(".+")
    return "".join(out) + "\\Z"


def name_glob_regex(pat: str) -> str:
    """Regex (with ``\\Z``) for a glob matched against one name (``**`` is ``*`` here)."""
    return _segment_regex(pat) + "\\Z"


def compile_glob(pattern: str) -> tuple[re.Pattern[str], bool]:
    """A tool's glob (find's pattern, search's ``glob``) → regex, and whether it matches the
    relative path (the pattern has a ``/``; a leading one anchors it) rather than the name.

    A pattern git would reject (an unterminated ``[``, a trailing backslash) is taken literally.
    """
    pattern = pattern.strip()
    while pattern.startswith("./"):
        pattern = pattern[2:]
    on_path = "/" in pattern
    pattern = pattern.lstrip("/")
    translate = path_glob_regex if on_path else name_glob_regex
    for candidate in (pattern, re.sub(r"([\\\[])", r"\\\1", pattern)):
        try:
            return re.compile(translate(candidate), re.DOTALL), on_path
        except (_Invalid, re.error):
            continue
    return re.compile(re.escape(pattern) + "\\Z"), on_path


# --- .gitignore files ---------------------------------------------------------------------


def _trim_trailing_spaces(line: str) -> str:
    """git's trim_trailing_spaces: drop unescaped trailing spaces."""
    last_space = None
    i = 0
    while i < len(line):
        c = line[i]
        if c == " ":
            if last_space is None:
                last_space = i
        elif c == "\\":
            i += 1
            if i >= len(line):
                return line
            last_space = None
        else:
            last_space = None
        i += 1
    return line if last_space is None else line[:last_space]


def parse_line(line: str) -> Rule | None:
    """One .gitignore line → Rule (None for blanks, comments and patterns that never match)."""
    if line.endswith("\n"):
        line = line[:-1]
    if line.endswith("\r"):
        line = line[:-1]
    if not line or line.startswith("#"):
        return None
    line = _trim_trailing_spaces(line)
    negate = False
    if line.startswith("!"):
        negate, line = True, line[1:]
    elif line.startswith(("\\!", "\\#")):
        line = line[1:]  # a literal leading "!" or "#"
    dir_only = line.endswith("/")
    if dir_only:
        line = line[:-1]
    if not line:
        return None
    basename = "/" not in line
    body = line
    if not basename and body.startswith("/"):
        body = body[1:]
    try:
        regex = name_glob_regex(body) if basename else path_glob_regex(body)
        compiled = re.compile(regex, re.DOTALL)
    except (_Invalid, re.error):
        return None
    return Rule(compiled, negate, dir_only, basename, line)


def parse(text: str) -> list[Rule]:
    """All rules of a .gitignore text (a UTF-8 byte order mark is skipped, as git does)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return [r for r in (parse_line(x) for x in text.split("\n")) if r is not None]


def _read_rules(path: str) -> list[Rule]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return []
    return parse(data.decode("utf-8", errors="surrogateescape"))


@dataclass
class _Run:
    """Consecutive rules with the same sign, merged: within such a run the order does not
    matter, so each kind (name or path; files and dirs or dirs only) is one alternation."""

    negate: bool
    name_any: re.Pattern[str] | None
    name_dirs: re.Pattern[str] | None
    path_any: re.Pattern[str] | None
    path_dirs: re.Pattern[str] | None

    def matches(self, name: str, sub: str, is_dir: bool) -> bool:
        if self.name_any is not None and self.name_any.match(name):
            return True
        if self.path_any is not None and self.path_any.match(sub):
            return True
        if is_dir:
            if self.name_dirs is not None and self.name_dirs.match(name):
                return True
            if self.path_dirs is not None and self.path_dirs.match(sub):
                return True
        return False


def _alternation(rules: list[Rule]) -> re.Pattern[str] | None:
    if not rules:
        return None
    return re.compile("|".join(f"(?:{r.regex.pattern})" for r in rules), re.DOTALL)


def _runs(rules: list[Rule]) -> list[_Run]:
    groups: list[list[Rule]] = []
    for rule in rules:
        if groups and groups[-1][0].negate == rule.negate:
            groups[-1].append(rule)
        else:
            groups.append([rule])
    return [
        _Run(
            group[0].negate,
            _alternation([r for r in group if r.basename and not r.dir_only]),
            _alternation([r for r in group if r.basename and r.dir_only]),
            _alternation([r for r in group if not r.basename and not r.dir_only]),
            _alternation([r for r in group if not r.basename and r.dir_only]),
        )
        for group in groups
    ]


@dataclass
class _Layer:
    """Rules of one ignore file; ``rel_to_base(rel)`` = ``prefix + rel[strip:]``."""

    runs: list[_Run]
    prefix: str
    strip: int
    has_paths: bool


class IgnoreStack:
    """Rule sets by base directory; :meth:`ignored` applies them git-style (last match wins).

    Paths are given relative to the walk root (``/``-separated); each layer knows how to turn
    that into a path relative to its own base directory.
    """

    def __init__(self) -> None:
        self.layers: list[_Layer] = []

    def add(self, rules: list[Rule], *, prefix: str = "", strip: int = 0) -> bool:
        if not rules:
            return False
        self.layers.append(_Layer(_runs(rules), prefix, strip, any(not r.basename for r in rules)))
        return True

    def push_dir(self, directory: str, rel: str) -> bool:
        """Load ``directory/.gitignore`` (``rel``: its path from the root, "" for the root)."""
        return self.add(_read_rules(os.path.join(directory, ".gitignore")), strip=len(rel) + 1 if rel else 0)

    def ignored(self, rel: str, name: str, is_dir: bool) -> bool:
        """Whether the entry ``rel`` (its parent directories already known not to be ignored) is."""
        for layer in reversed(self.layers):
            sub = layer.prefix + rel[layer.strip :] if layer.has_paths else ""
            for run in reversed(layer.runs):
                if run.matches(name, sub, is_dir):
                    return not run.negate
        return False


def find_repo_root(start: Path) -> Path | None:
    for p in (start, *start.parents):
        if (p / ".git").exists():
            return p
    return None


def git_common_dir(repo: Path) -> Path:
    """The directory holding ``info/exclude``: ``.git``, or for a worktree its main ``.git``."""
    dot_git = repo / ".git"
    if not dot_git.is_file():
        return dot_git
    try:
        text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return dot_git
    if not text.startswith("gitdir:"):
        return dot_git
    git_dir = Path(os.path.normpath(repo / text[len("gitdir:") :].strip()))
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return git_dir
    return Path(os.path.normpath(git_dir / common))


def stack_for(root: Path) -> IgnoreStack:
    """Rules that apply at ``root``: info/exclude and every .gitignore from the repo root down."""
    stack = IgnoreStack()
    repo = find_repo_root(root)
    if repo is None:
        return stack

    def prefix_of(base: Path) -> str:
        rel = os.path.relpath(root, base).replace(os.sep, "/")
        return "" if rel == "." else rel + "/"

    stack.add(_read_rules(str(git_common_dir(repo) / "info" / "exclude")), prefix=prefix_of(repo))
    chain = [root, *root.parents]
    for p in reversed(chain[: chain.index(repo) + 1]):
        if p != root:
            stack.add(_read_rules(str(p / ".gitignore")), prefix=prefix_of(p))
    return stack


@dataclass(frozen=True)
class Entry:
    """One walked entry: absolute path, path from the root (``/``-separated), kind."""

    path: str
    rel: str
    kind: str
    """``"dir"``, ``"file"`` (regular), ``"link"`` (symlink, never followed) or ``"other"``."""


def _kind(entry: os.DirEntry[str]) -> str | None:
    try:
        if entry.is_symlink():
            return "link"
        if entry.is_dir(follow_symlinks=False):
            return "dir"
        if entry.is_file(follow_symlinks=False):
            return "file"
    except OSError:
        return None  # vanished
    return "other"


def iter_tree(
    root: Path,
    *,
    hidden: bool = True,
    gitignore: bool = True,
    max_depth: int | None = None,
    check: Callable[[], None] | None = None,
) -> Iterator[Entry]:
    """Every entry under ``root`` (not root itself), depth first, sorted by name per directory.

    ``.git`` and ``node_modules`` are never entered; with ``gitignore`` ignored entries are
    skipped (and ignored directories not entered); without ``hidden`` dot-entries are skipped.
    Symlinks are listed, never followed, so loops cannot happen. Unreadable directories and
    entries that vanish mid-walk are skipped. ``check()`` is called once per entry and may
    raise to stop the walk (cancellation). Iterative: depth is not limited by the recursion limit.
    """
    stack = stack_for(root) if gitignore else IgnoreStack()
    # Each frame: (iterator over sorted entries, depth, ignore layer pushed for this directory).
    frames: list[tuple[Iterator[tuple[os.DirEntry[str], str]], int, bool]] = []

    def enter(directory: str, rel: str, depth: int) -> None:
        pushed = gitignore and stack.push_dir(directory, rel)
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            entries = []
        prefix = rel + "/" if rel else ""
        frames.append((((e, prefix + e.name) for e in entries), depth, pushed))

    enter(str(root), "", 1)
    while frames:
        entries, depth, _pushed = frames[-1]
        item = next(entries, None)
        if item is None:
            if frames.pop()[2]:
                stack.layers.pop()
            continue
        if check is not None:
            check()
        e, rel = item
        name = e.name
        if name in ALWAYS_PRUNE or (not hidden and name.startswith(".")):
            continue
        kind = _kind(e)
        if kind is None:
            continue
        if gitignore and stack.layers and stack.ignored(rel, name, kind == "dir"):
            continue
        yield Entry(e.path, rel, kind)
        if kind == "dir" and (max_depth is None or depth < max_depth):
            enter(e.path, rel, depth + 1)


def walk(
    root: Path,
    *,
    hidden: bool = True,
    gitignore: bool = True,
    max_depth: int | None = None,
    include_dirs: bool = False,
    check: Callable[[], None] | None = None,
) -> Iterator[tuple[str, bool]]:
    """``(path, is_dir)`` for each entry of :func:`iter_tree` (directories only with ``include_dirs``)."""
    for entry in iter_tree(root, hidden=hidden, gitignore=gitignore, max_depth=max_depth, check=check):
        is_dir = entry.kind == "dir"
        if include_dirs or not is_dir:
            yield entry.path, is_dir
