"""kit/fsio.py: the one atomic_write and the one private_dir."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from atomic_host.kit.fsio import atomic_write, private_dir


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_atomic_write_replaces_with_mode_and_creates_parents(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "settings.json"
    atomic_write(target, "first ✓")
    assert target.read_text() == "first ✓" and _mode(target) == 0o644
    atomic_write(target, b"\x00second", 0o600, fsync=False)
    assert target.read_bytes() == b"\x00second" and _mode(target) == 0o600
    assert sorted(p.name for p in target.parent.iterdir()) == ["settings.json"]  # no temp file left


def test_atomic_write_failure_leaves_the_target_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "trust.json"
    atomic_write(target, "old")

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        atomic_write(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["trust.json"]


def test_atomic_write_large_data_is_written_whole(tmp_path: Path) -> None:
    data = os.urandom(3 * 1024 * 1024)
    atomic_write(tmp_path / "big.bin", data)
    assert (tmp_path / "big.bin").read_bytes() == data


def test_private_dir_creates_and_tightens(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    assert private_dir(fresh) and _mode(fresh) == 0o700
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o755)
    os.chmod(loose, 0o755)
    assert private_dir(loose) and _mode(loose) == 0o700


def test_private_dir_refuses_symlinks_files_and_missing_parents(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    assert not private_dir(link)
    (tmp_path / "file").write_text("x")
    assert not private_dir(tmp_path / "file")
    assert not private_dir(tmp_path / "missing" / "child")


def test_atomic_write_mode_none_keeps_the_existing_mode_or_follows_the_umask(tmp_path: Path) -> None:
    from atomic_host.kit.fsio import atomic_write as write

    script = tmp_path / "run.sh"
    script.write_text("old")
    os.chmod(script, 0o751)
    write(script, b"new", None)
    assert script.read_bytes() == b"new" and _mode(script) == 0o751
    umask = os.umask(0o027)
    try:
        write(tmp_path / "fresh.txt", b"x", None)
    finally:
        os.umask(umask)
    assert _mode(tmp_path / "fresh.txt") == 0o640


def test_ensure_private_dir_makes_missing_parents_private_and_tightens_the_leaf(tmp_path: Path) -> None:
    from atomic_host.kit.fsio import ensure_private_dir

    leaf = tmp_path / "agent" / "sessions" / "--p--"
    ensure_private_dir(leaf)
    assert [_mode(p) for p in (tmp_path / "agent", leaf.parent, leaf)] == [0o700, 0o700, 0o700]
    os.chmod(leaf, 0o755)
    ensure_private_dir(leaf)
    assert _mode(leaf) == 0o700


@pytest.mark.parametrize(
    ("text", "expected", "warning"),
    [
        (None, {}, ""),
        ("", {}, ""),
        ("\ufeff{\"a\": 1}", {"a": 1}, ""),
        ("{not json", {}, "atomic: ignoring corrupt test config "),
        ("[1, 2]", {}, "atomic: ignoring test config "),
    ],
    ids=["missing", "empty", "bom", "corrupt", "not-an-object"],
)
def test_read_json_object(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | None, expected: dict, warning: str
) -> None:
    from atomic_host.kit.fsio import read_json_object

    path = tmp_path / "config.json"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    assert read_json_object(path, "test config") == expected
    err = capsys.readouterr().err
    assert err.startswith(warning) if warning else err == ""


def test_read_json_object_never_raises_on_any_bytes(tmp_path: Path) -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from atomic_host.kit.fsio import read_json_object

    path = tmp_path / "fuzz.json"

    @settings(max_examples=200, deadline=None)
    @given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
    def check(data: bytes) -> None:
        path.write_bytes(data)
        result = read_json_object(path, "fuzz")
        assert isinstance(result, dict)

    check()
