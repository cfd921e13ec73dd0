"""search, find and the .gitignore walk against real trees and independent oracles:
``git ls-files`` for ignore semantics, Python ``re`` over the same files for matches."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from suite_paths import ROOT as ROOT_DIR

from builtin_plugins.tools._gitignore import iter_tree
from builtin_plugins.tools._search_core import FILES_PER_PAGE, search

ROOT = ROOT_DIR
GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git is not installed: the .gitignore oracle needs it")


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def walked_files(root: Path) -> set[str]:
    return {e.rel for e in iter_tree(root, hidden=True, gitignore=True) if e.kind == "file"}


def git_files(root: Path) -> set[str]:
    out = git(root, "ls-files", "--cached", "--others", "--exclude-standard", "-z")
    return {p for p in out.split("\0") if p and (root / p).is_file() and not (root / p).is_symlink()}


@needs_git
def test_walk_of_this_checkout_matches_git(tmp_path: Path) -> None:
    """This repository with its real .gitignore (and a venv, caches, build output inside it)."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    tree = tmp_path / "repo"
    shutil.copytree(ROOT, tree, ignore=shutil.ignore_patterns(".venv", "*.egg-info"), symlinks=True)
    (tree / "__pycache__").mkdir(exist_ok=True)
    (tree / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (tree / "build").mkdir(exist_ok=True)
    (tree / "build" / "out.txt").write_text("x")
    ours, theirs = walked_files(tree), git_files(tree)
    # git does not list files of nested repositories or .git itself; neither does the walk
    assert ours == theirs, (sorted(ours - theirs)[:20], sorted(theirs - ours)[:20])


GITIGNORE_LINES = st.sampled_from(
    [
        "*.log", "!keep.log", "build/", "/top.txt", "a/**/b", "**/deep", "*.tmp", "!*.tmp", "dir/", "!dir/",
        "sub/*.py", "!sub/keep.py", "[ab].txt", "?.md", "\\#hash", "x/", "/x", "y/*", "!y/z", "**/*.bak",
        "# comment", "", "trailing\\ ", "n*/m", "*/", "!a/", "a/b/", "*.[ch]", "!c.c", "y/**", "*/*", "!y/dir/",
        "!*/", "*", "y/***",
    ]
)  # fmt: skip
NAMES = st.sampled_from(["a", "b", "x", "y", "z", "dir", "sub", "deep", "build", "n1", "m"])
FILES = st.sampled_from(
    ["keep.log", "w.log", "top.txt", "a.txt", "c.txt", "q.md", "k.py", "keep.py", "f.tmp", "#hash", "c.c", "h.h",
     "o.bak", "trailing ", "plain"]
)  # fmt: skip
PATHS = st.lists(st.tuples(st.lists(NAMES, max_size=3), FILES), min_size=1, max_size=12)


@needs_git
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(root_rules=st.lists(GITIGNORE_LINES, max_size=8), nested_rules=st.lists(GITIGNORE_LINES, max_size=5),
       paths=PATHS)  # fmt: skip
def test_walk_agrees_with_git_on_generated_ignore_files(tmp_path_factory, root_rules, nested_rules, paths) -> None:
    tree = tmp_path_factory.mktemp("ign")
    git(tree, "init", "-q")
    (tree / ".gitignore").write_text("\n".join(root_rules) + "\n")
    for dirs, name in paths:
        directory = tree.joinpath(*dirs)
        if directory.exists() and not directory.is_dir():
            continue
        directory.mkdir(parents=True, exist_ok=True)
        if not (directory / name).is_dir():
            (directory / name).write_text("x")
    for sub in ("a", "y"):  # y/.gitignore is read even when "y/*" ignores the file itself
        if (tree / sub).is_dir():
            (tree / sub / ".gitignore").write_text("\n".join(nested_rules) + "\n")
    assert walked_files(tree) == git_files(tree)


def _oracle_files_with_matches(root: Path, rx: re.Pattern[str]) -> list[str]:
    """Files (in the walk's order) with at least one matching line: Python re, line by line."""
    found = []
    for rel in sorted(walked_files(root), key=lambda r: [part for part in r.split("/")]):
        data = (root / rel).read_bytes()
        if b"\0" in data[:8192]:
            continue
        text = data.decode("utf-8", "replace")
        if any(rx.search(line.rstrip("\r")) for line in text.split("\n")):
            found.append(rel)
    return found


def test_search_finds_every_file_re_finds_in_the_stdlib(tmp_path: Path) -> None:
    """A big real tree (the Python standard library, ~2k files): every matching file is reported,
    page by page, in walk order, and nothing else."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    tree = tmp_path / "lib"
    shutil.copytree(stdlib / "json", tree / "json")
    shutil.copytree(stdlib / "email", tree / "email")
    shutil.copytree(stdlib / "asyncio", tree / "asyncio")
    pattern = r"^\s+raise \w+Error\("
    rx = re.compile(pattern)
    expected = _oracle_files_with_matches(tree, rx)
    assert len(expected) > FILES_PER_PAGE, "the test needs more than one page"
    got: list[str] = []
    skip = 0
    while True:
        page = search({"pattern": pattern, "ignoreCase": False, "root": str(tree), "cwd": str(tree), "glob": None,
                       "before": 0, "after": 0, "limit": None, "skip": skip, "gitignore": True})  # fmt: skip
        blocks = [b for b in page["text"].split("\n\n") if b and not b.startswith("[Showing")]
        got += [b.split("\n", 1)[0] for b in blocks]
        if not page["details"]["more"]:
            break
        skip = page["details"]["nextSkip"]
    walk_order = [e.rel for e in iter_tree(tree) if e.kind == "file"]
    assert got == sorted(expected, key=walk_order.index)


def test_search_handles_hostile_files(tmp_path: Path) -> None:
    """Binary files, CRLF, a BOM, a 2 MB single line, a non-UTF-8 name, a FIFO, a symlink loop and an
    unreadable directory: matches are found where they are, nothing hangs or raises."""
    root = tmp_path / "t"
    root.mkdir()
    (root / "bin.dat").write_bytes(b"\0\0NEEDLE\0")
    (root / "crlf.txt").write_bytes(b"one\r\nNEEDLE here\r\nthree\r\n")
    (root / "bom.txt").write_bytes("\ufeffNEEDLE first\n".encode())
    (root / "long.txt").write_text("x" * 2_000_000 + "NEEDLE" + "y" * 1000 + "\n")
    (root / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"NEEDLE latin-1\n")
    os.mkfifo(root / "fifo")
    (root / "loop").symlink_to(root)
    locked = root / "locked"
    locked.mkdir()
    (locked / "inside.txt").write_text("NEEDLE\n")
    locked.chmod(0)
    try:
        page = search({"pattern": "NEEDLE", "ignoreCase": False, "root": str(root), "cwd": str(root), "glob": None,
                       "before": 0, "after": 0, "limit": None, "skip": 0, "gitignore": True})  # fmt: skip
    finally:
        locked.chmod(0o700)
    text = page["text"]
    assert "crlf.txt\n  2: NEEDLE here" in text and "\r" not in text
    assert "bom.txt\n  1: NEEDLE first" in text
    # root reads a mode-0 directory anyway; anyone else has it skipped, never an error
    assert ("locked/inside.txt" in text) == (os.geteuid() == 0)
    assert "long.txt" in text and max(len(line) for line in text.splitlines()) <= 600
    assert "caf\\xe9.txt" in text
    assert "bin.dat" not in text
