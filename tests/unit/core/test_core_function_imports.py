"""Every import inside a function says why it is there (issue 25).

An import belongs at the top of its module. One inside a function (or a method, or a nested
function) is for import-time cost only: a heavy or optional dependency (DBOS, ACP, MCP, OAuth,
psycopg, httpx, pydantic, …) that ``atomic --mode rpc`` must not pay for at start
(tests/perf/startup_imports), a module only a rare path needs, or an optional extra whose absence
becomes a clear error. Each such import carries a comment that says which: on the line directly
above it (or above the run of imports it belongs to, or on the header of the block it opens:
``try:  # mcp 2.x``), or at the end of its own line.

The rule is checked on the syntax tree of every module of ``atomic_host`` and ``builtin_plugins``;
``EXCLUDED_FOR_NOW`` names the imports that could not be explained or moved yet (aim: empty).
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

from suite_paths import ROOT

PACKAGES = ("atomic_host", "builtin_plugins")

EXCLUDED_FOR_NOW: frozenset[str] = frozenset()
"""``path:line`` of function-level imports still without a reason (each one is a debt)."""


def _comment_lines(source: str) -> tuple[set[int], set[int]]:
    """Lines with a comment, and the lines that are only a comment."""
    anywhere: set[int] = set()
    alone: set[int] = set()
    lines = source.splitlines()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            row = tok.start[0]
            anywhere.add(row)
            if lines[row - 1].strip().startswith("#"):
                alone.add(row)
    return anywhere, alone


def _statement_lists(node: ast.AST) -> list[list[ast.stmt]]:
    """The statement lists directly held by ``node`` (an except clause or a match case is a node of
    its own, visited in turn)."""
    lists = (getattr(node, name, None) for name in ("body", "orelse", "finalbody"))
    return [value for value in lists if isinstance(value, list) and value and isinstance(value[0], ast.stmt)]


def unexplained_imports(source: str) -> list[int]:
    """Line numbers of imports inside a function with no comment saying why."""
    tree = ast.parse(source)
    anywhere, alone = _comment_lines(source)
    offenders: list[int] = []

    def check_list(stmts: list[ast.stmt]) -> None:
        group_start = None  # first line of the run of imports the current one belongs to
        for stmt in stmts:
            if not isinstance(stmt, ast.Import | ast.ImportFrom):
                group_start = None
                continue
            if group_start is None:
                group_start = stmt.lineno
            own = set(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
            above = group_start - 1
            # a comment line above, or the comment of the block header (``try:  # why``) that opens this body
            said = above in alone or (above in anywhere and group_start == stmts[0].lineno)
            if not (own & anywhere or said):
                offenders.append(stmt.lineno)

    def visit(node: ast.AST, in_function: bool) -> None:
        if in_function:
            for stmts in _statement_lists(node):
                check_list(stmts)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case):
                visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef))

    visit(tree, False)
    return sorted(offenders)


def _modules() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def test_every_function_level_import_says_why() -> None:
    found = []
    for path in _modules():
        rel = path.relative_to(ROOT).as_posix()
        found += [f"{rel}:{line}" for line in unexplained_imports(path.read_text(encoding="utf-8"))]
    missing = [spot for spot in found if spot not in EXCLUDED_FOR_NOW]
    assert not missing, "imports inside a function without a comment saying why (move it up, or say why):\n" + (
        "\n".join(missing)
    )
    stale = sorted(EXCLUDED_FOR_NOW - set(found))
    assert not stale, f"EXCLUDED_FOR_NOW names imports that are explained or gone now: {stale}"


def test_the_check_tells_explained_from_unexplained() -> None:
    source = '''
import os


def top_is_fine():
    return os.sep


def bare():
    import json
    return json


def above():
    # lazy: PyYAML only for a file with frontmatter
    import yaml
    from yaml import SafeLoader
    return yaml, SafeLoader


def trailing():
    import tomllib  # lazy: only for a TOML file
    return tomllib


def header():
    try:  # mcp 2.x first
        from mcp import new
    except ImportError:
        from mcp import old
    return new or old


def gap():
    # a comment, then code, then the import
    x = 1
    import csv
    return csv, x


def nested():
    def inner():
        try:
            import fcntl
        except ImportError:
            from msvcrt import locking
        return fcntl, locking
    return inner


class C:
    def method(self):
        import re
        return re

    import array  # a class-level import is module-level code: not checked
'''
    lines = source.splitlines()
    flagged = {lines[n - 1].strip() for n in unexplained_imports(source)}
    assert flagged == {
        "import json", "import csv", "import fcntl", "from msvcrt import locking", "import re", "from mcp import old"
    }
