"""A small .gitignore matcher and a pruning directory walker for find/search/ls.

Supports what real repositories use: ``#`` comments, ``!`` negation, trailing ``/`` for
directories only, anchored patterns (a ``/`` anywhere but the end), ``*``, ``?``, ``[...]``,
``**``, backslash escapes, nested ``.gitignore`` files (deeper files win, later lines win) and
``.git/info/exclude``. A directory that is ignored is not entered, so (as in git) nothing below
it can be re-included.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ALWAYS_PRUNE = frozenset({".git", "node_modules"})


@dataclass(frozen=True)
class Rule:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool
    pattern: str


def _glob_to_regex(pat: str) -> str:
    out: list[str] = []
    i, n = 0, len(pat)
    while i < n:
        c = pat[i]
        if c == "*":
            if pat.startswith("**", i):
                before_ok = i == 0 or pat[i - 1] == "/"
                after = pat[i + 2 : i + 3]
                if before_ok and after == "/":
                    out.append("(?:.*/)?")
                    i += 3
                    continue
                if before_ok and after == "":
                    out.append(".*")
                    i += 2
                    continue
                out.append("[^/]*")
                i += 2
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = i + 1
            if j < n and pat[j] in "!^":
                j += 1
            if j < n and pat[j] == "]":
                j += 1
            while j < n and pat[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(c))
            else:
                body = pat[i + 1 : j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pat[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def parse_line(line: str) -> Rule | None:
    """One .gitignore line → Rule (None for blanks and comments)."""
    line = line.rstrip("\n").rstrip("\r")
    # Trailing spaces are ignored unless escaped.
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]
    if not line or line.startswith("#"):
        return None
    negate = False
    if line.startswith("!"):
        negate, line = True, line[1:]
    elif line.startswith(("\\!", "\\#")):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    body = _glob_to_regex(line.lstrip("/"))
    prefix = "" if anchored else "(?:.*/)?"
    # A match of a directory also covers everything below it (for paths checked directly).
    regex = re.compile(f"^{prefix}{body}(?:/.*)?$", re.DOTALL)
    return Rule(regex, negate, dir_only, line)


def parse(text: str) -> list[Rule]:
    return [r for r in (parse_line(x) for x in text.splitlines()) if r is not None]


def _rule_matches(rule: Rule, rel: str, is_dir: bool) -> bool:
    m = rule.regex.match(rel)
    if not m:
        return False
    if rule.dir_only and not is_dir:
        # "build/" ignores a file only through an ancestor directory named build.
        return rule.regex.match(rel.rsplit("/", 1)[0]) is not None if "/" in rel else False
    return True


class IgnoreStack:
    """Rule sets by base directory; ``ignored`` applies them git-style (last match wins)."""

    def __init__(self) -> None:
        self.layers: list[tuple[str, list[Rule]]] = []

    def push_dir(self, directory: str) -> bool:
        """Load ``directory/.gitignore`` if present; return whether a layer was pushed."""
        try:
            with open(os.path.join(directory, ".gitignore"), encoding="utf-8", errors="replace") as f:
                rules = parse(f.read())
        except OSError:
            return False
        if not rules:
            return False
        self.layers.append((directory, rules))
        return True

    def add(self, base: str, rules: list[Rule]) -> None:
        if rules:
            self.layers.append((base, rules))

    def ignored(self, path: str, is_dir: bool) -> bool:
        result = False
        for base, rules in self.layers:
            rel = os.path.relpath(path, base).replace(os.sep, "/")
            if rel.startswith(".."):
                continue
            for rule in rules:
                if _rule_matches(rule, rel, is_dir):
                    result = not rule.negate
        return result


def find_repo_root(start: Path) -> Path | None:
    for p in (start, *start.parents):
        if (p / ".git").exists():
            return p
    return None


def stack_for(root: Path) -> IgnoreStack:
    """Rules that apply at ``root``: .git/info/exclude and every .gitignore from the repo root down."""
    stack = IgnoreStack()
    repo = find_repo_root(root)
    if repo is None:
        return stack
    try:
        exclude = (repo / ".git" / "info" / "exclude").read_text(encoding="utf-8", errors="replace")
        stack.add(str(repo), parse(exclude))
    except OSError:
        pass
    chain = [root, *root.parents]
    for p in reversed(chain[: chain.index(repo) + 1] if repo in chain else [root]):
        if p != root:
            stack.push_dir(str(p))
    return stack


def walk(
    root: Path,
    *,
    hidden: bool = True,
    gitignore: bool = True,
    max_depth: int | None = None,
    include_dirs: bool = False,
) -> Iterator[tuple[str, bool]]:
    """Yield ``(path, is_dir)`` under ``root`` (not root itself), sorted per directory, pruned.

    ``.git`` and ``node_modules`` are never entered; with ``gitignore`` ignored entries are
    skipped; without ``hidden`` dot-entries are skipped. Symlinked directories are not followed.
    """
    stack = stack_for(root) if gitignore else IgnoreStack()

    def rec(directory: str, depth: int) -> Iterator[tuple[str, bool]]:
        pushed = gitignore and stack.push_dir(directory)
        try:
            try:
                with os.scandir(directory) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError:
                return
            for e in entries:
                name = e.name
                if name in ALWAYS_PRUNE:
                    continue
                if not hidden and name.startswith("."):
                    continue
                try:
                    is_dir = e.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if gitignore and stack.ignored(e.path, is_dir):
                    continue
                if is_dir:
                    if include_dirs:
                        yield e.path, True
                    if max_depth is None or depth < max_depth:
                        yield from rec(e.path, depth + 1)
                else:
                    yield e.path, False
        finally:
            if pushed:
                stack.layers.pop()

    yield from rec(str(root), 1)
