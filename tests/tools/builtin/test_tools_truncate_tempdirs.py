from __future__ import annotations

import os
import stat
from pathlib import Path

from atomic_host.kit.tempdirs import sanitize_id, session_temp_dir, temp_root
from atomic_host.kit.truncate import truncate_head, truncate_tail


def test_no_truncation_when_small() -> None:
    tr = truncate_head("a\nb\n")
    assert not tr.truncated and tr.content == "a\nb\n" and tr.total_lines == 2


def test_head_by_lines_and_bytes() -> None:
    text = "\n".join(str(i) for i in range(1, 5001))
    tr = truncate_head(text)
    assert tr.truncated and tr.truncated_by == "lines" and tr.last_line == 3000
    assert tr.content.split("\n")[-1] == "3000"
    tr = truncate_head("x" * 100 + "\n" + "y" * 100, max_bytes=150)
    assert tr.truncated_by == "bytes" and tr.content == "x" * 100 and tr.last_line == 1


def test_head_first_line_too_long() -> None:
    tr = truncate_head("z" * 100, max_bytes=10)
    assert tr.first_line_exceeds_limit and tr.content == ""


def test_tail_keeps_last_lines() -> None:
    text = "\n".join(str(i) for i in range(1, 5001))
    tr = truncate_tail(text)
    assert tr.truncated and tr.first_line == 2001 and tr.last_line == 5000
    assert tr.content.startswith("2001\n") and tr.content.endswith("5000")


def test_tail_cuts_huge_last_line_on_char_boundary() -> None:
    tr = truncate_tail("é" * 100, max_bytes=11)
    assert tr.last_line_partial and tr.content == "é" * 5


def test_session_temp_dir_private(private_tmp: Path) -> None:
    d = session_temp_dir("abc/../x y")
    assert d is not None and d.parent == temp_root() and d.name == sanitize_id("abc/../x y")
    assert "/" not in d.name and d.name != ".."
    for p in (d, d.parent):
        st = os.lstat(p)
        assert stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.getuid()


def test_session_temp_dir_fixes_loose_mode(private_tmp: Path) -> None:
    root = temp_root()
    root.mkdir(mode=0o755)
    os.chmod(root, 0o755)
    assert session_temp_dir("s") is not None
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700


def test_session_temp_dir_refuses_symlinks(private_tmp: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    temp_root().symlink_to(target)
    assert session_temp_dir("s") is None
    assert not (target / "s").exists()


def test_session_temp_dir_refuses_symlinked_session(private_tmp: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    root = temp_root()
    root.mkdir(mode=0o700)
    (root / "s").symlink_to(target)
    assert session_temp_dir("s") is None


def test_session_temp_dir_refuses_file(private_tmp: Path) -> None:
    temp_root().write_text("not a dir")
    assert session_temp_dir("s") is None


def test_session_temp_dir_refuses_foreign_owner(private_tmp: Path) -> None:
    import pytest

    if os.getuid() != 0:
        pytest.skip("needs root to create a directory owned by someone else")
    root = temp_root()
    root.mkdir(mode=0o700)
    os.chown(root, 65534, 65534)
    assert session_temp_dir("s") is None
