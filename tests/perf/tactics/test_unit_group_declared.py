"""The entry-point pre-check (``group_declared``): a ``[atomic_host]`` section in any
``*.dist-info``/``*.egg-info`` on ``sys.path`` is found, wherever the directory sits and whatever
else it holds; directories without a distribution (the standard library's) are passed over."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_host.kit._fast.dist_info import group_declared


def _dist(directory: Path, name: str, entry_points: str | None) -> None:
    info = directory / name
    info.mkdir(parents=True)
    if entry_points is not None:
        (info / "entry_points.txt").write_text(entry_points)


def test_a_declaring_distribution_is_found_behind_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stdlib, site = tmp_path / "stdlib", tmp_path / "site"
    (stdlib / "json").mkdir(parents=True)
    (stdlib / "os.py").write_text("")
    _dist(site, "plain-1.0.dist-info", None)
    _dist(site, "tool-2.0.dist-info", "[console_scripts]\ntool = tool:main\n")
    monkeypatch.setattr("sys.path", [str(tmp_path / "missing"), str(stdlib), str(site)])
    assert not group_declared("atomic_host")
    _dist(site, "zz_plugin-0.1.egg-info", "[console_scripts]\nx = y\n\n[atomic_host]\ndemo = zz_plugin\n")
    assert group_declared("atomic_host")
    assert not group_declared("other_group")


def test_a_section_outside_a_distribution_does_not_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _dist(tmp_path, "not-a-dist", "[atomic_host]\ndemo = x\n")
    monkeypatch.setattr("sys.path", [str(tmp_path)])
    assert not group_declared("atomic_host")
    _dist(tmp_path / "deeper", "real-1.0.dist-info", "[atomic_host]\ndemo = x\n")
    assert not group_declared("atomic_host")  # only distributions directly on a sys.path entry
    monkeypatch.setattr("sys.path", [str(tmp_path), str(tmp_path / "deeper")])
    assert group_declared("atomic_host")
