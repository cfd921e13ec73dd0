"""Re-including directories: fixed .gitignore cases where the walk must agree with real git.

Each case names one path and whether git keeps it (checked against git itself first, so a case
that misstates git fails loudly), then compares every walked file with ``git ls-files --others
--exclude-standard`` and every walked directory with ``git check-ignore``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from builtin_plugins.tools._gitignore import iter_tree

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="the oracle is real git")

FILES = ["y/dir/keep.log", "y/other", "y/dir/sub/deep.txt", "y/z.py", "y/dir/a.py", "top.txt", "a/y/dir/keep.log"]

# (id, {directory: .gitignore text}, path to check, git keeps it)
CASES = [
    # "y/*" excludes y's entries, not y: a negation may re-include the directory y/dir.
    ("star-then-negated-dir", {"": "y/*\n!dir/\n"}, "y/dir/keep.log", True),
    ("star-then-negated-anchored-dir", {"": "y/*\n!y/dir/\n"}, "y/dir/keep.log", True),
    ("star-then-negated-dir-deep", {"": "y/*\n!dir/\n"}, "y/dir/sub/deep.txt", True),
    ("star-sibling-stays-out", {"": "y/*\n!dir/\n"}, "y/other", False),
    # "y/" excludes y itself: nothing below it can come back.
    ("dir-then-negated-subdir", {"": "y/\n!y/dir/\n"}, "y/dir/keep.log", False),
    ("dir-then-negated-file", {"": "y/\n!y/dir/keep.log\n"}, "y/dir/keep.log", False),
    # "y/**" matches the file itself, so re-including its directory is not enough ...
    ("globstar-then-negated-dir", {"": "y/**\n!y/dir/\n"}, "y/dir/keep.log", False),
    # ... unless the files are re-included too.
    ("globstar-then-negated-dir-and-files", {"": "y/**\n!y/dir/\n!y/dir/**\n"}, "y/dir/keep.log", True),
    # Three stars in a segment are "**" too (wildmatch).
    ("three-stars-is-globstar", {"": "y/***\n!y/dir/\n"}, "y/dir/keep.log", False),
    ("star-dir-only-then-negated", {"": "y/*/\n!dir/\n"}, "y/dir/keep.log", True),
    ("star-star-pattern", {"": "*/*\n!dir/\n"}, "y/dir/keep.log", True),
    ("star-star-pattern-sibling", {"": "*/*\n!dir/\n"}, "y/z.py", False),
    # Nested .gitignore files: y/.gitignore is read although "y/*" ignores the file itself.
    ("nested-negation-reincludes", {"": "y/*\n", "y": "!dir/\n"}, "y/dir/keep.log", True),
    ("nested-negation-under-excluded-dir", {"": "y/\n", "y": "!dir/\n"}, "y/dir/keep.log", False),
    ("nested-star-anchored-to-its-dir", {"a": "y/*\n!dir/\n"}, "a/y/dir/keep.log", True),
    ("nested-star-does-not-float", {"a": "y/*\n"}, "y/other", True),
    ("nested-deeper-file-wins", {"": "y/*\n!dir/\n", "y/dir": "*.log\n"}, "y/dir/keep.log", False),
    ("nested-deeper-negation-wins", {"": "*.log\n", "y/dir": "!keep.log\n"}, "y/dir/keep.log", True),
    # The whitelist idiom: ignore everything, re-include every directory, keep *.py.
    ("whitelist-py", {"": "*\n!*/\n!*.py\n"}, "y/dir/a.py", True),
    ("whitelist-py-others-out", {"": "*\n!*/\n!*.py\n"}, "y/dir/keep.log", False),
]


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=check, capture_output=True, text=True)


def make_tree(root: Path, ignores: dict[str, str]) -> None:
    git(root, "init", "-q")
    for f in FILES:
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text("x\n")
    for directory, text in ignores.items():
        (root / directory).mkdir(parents=True, exist_ok=True)
        (root / directory / ".gitignore").write_text(text)


def git_ignores(root: Path, path: str) -> bool:
    """``git check-ignore`` (exit 0: ignored, 1: not); it also honours excluded parent directories."""
    proc = git(root, "check-ignore", "-q", "--no-index", path, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode == 0


@pytest.mark.parametrize(("ignores", "path", "kept"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_walk_agrees_with_git_on_reincluded_directories(
    tmp_path: Path, ignores: dict[str, str], path: str, kept: bool
) -> None:
    make_tree(tmp_path, ignores)
    listed = git(tmp_path, "ls-files", "--others", "--exclude-standard", "-z").stdout
    git_files = {p for p in listed.split("\0") if p}
    assert (path in git_files) == kept, f"the case misstates git: {path} kept={path in git_files}"

    walked = list(iter_tree(tmp_path, hidden=True, gitignore=True))
    ours = {e.rel for e in walked if e.kind == "file"}
    assert (path in ours) == kept
    assert ours == git_files, (sorted(ours - git_files), sorted(git_files - ours))

    all_dirs = {str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_dir() and ".git" not in p.parts}
    git_dirs = {d for d in all_dirs if not git_ignores(tmp_path, d)}
    our_dirs = {e.rel for e in walked if e.kind == "dir"}
    assert our_dirs == git_dirs, (sorted(our_dirs - git_dirs), sorted(git_dirs - our_dirs))
