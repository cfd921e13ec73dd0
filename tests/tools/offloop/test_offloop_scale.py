"""Search and walk cost grow linearly with the tree: ×10 and ×100 the files cost about ×10 and ×100."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from offloop_helpers import make_big_tree

from builtin_plugins.tools._gitignore import iter_tree
from builtin_plugins.tools._search_core import search


def _search_seconds(root: Path) -> float:
    request = {"pattern": "NEEDLE", "ignoreCase": False, "root": str(root), "cwd": str(root), "glob": None,
               "before": 1, "after": 3, "limit": None, "skip": 0, "gitignore": True}  # fmt: skip
    best = float("inf")
    for _ in range(3):
        # CPU time of this process, not wall time: other work on a loaded machine does not inflate it
        start = time.process_time()
        search(request)
        best = min(best, time.process_time() - start)
    return best


@pytest.mark.slow
def test_search_cost_is_linear_in_tree_size(tmp_path: Path) -> None:
    sizes = {}
    for dirs in (2, 20, 200):
        root = tmp_path / f"t{dirs}"
        files = make_big_tree(root, dirs=dirs, files_per_dir=100, big_files=0)
        assert sum(1 for e in iter_tree(root) if e.kind == "file") == files + 1  # and the .gitignore
        sizes[files] = _search_seconds(root)
    t1, t10, t100 = (sizes[k] for k in sorted(sizes))
    # generous bounds (a quadratic walk would be ×100 and ×10,000); timer noise dominates the small tree
    assert t10 < 25 * max(t1, 0.002), sizes
    assert t100 < 25 * t10, sizes


def test_walk_cost_is_linear_in_tree_size(tmp_path: Path) -> None:
    times = []
    for dirs in (5, 50):
        root = tmp_path / f"w{dirs}"
        make_big_tree(root, dirs=dirs, files_per_dir=40, big_files=0)
        start = time.process_time()
        count = sum(1 for _ in iter_tree(root))
        times.append((count, time.process_time() - start))
    (n1, t1), (n10, t10) = times
    assert n10 > 9 * n1
    assert t10 < 30 * max(t1, 0.001), times
