"""Durable and private file-system helpers: the one ``atomic_write`` and the one ``private_dir``."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path


def write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte is written (a write may be partial)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable (best effort: not every file system supports it)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: Path, data: str | bytes, mode: int = 0o644, *, fsync: bool = True) -> None:
    """Replace ``path`` with ``data`` (str is UTF-8 encoded) so readers see the old or the new file,
    never a part: a unique temp file in the same directory, fsync, chmod ``mode``, rename over the
    target, fsync the directory. Missing parent directories are created; on failure the temp file
    is removed and the target is untouched."""
    import tempfile  # lazy: tempfile pulls in random (~9 ms of host startup)

    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode() if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        write_all(fd, raw)
        if fsync:
            os.fsync(fd)
        os.close(fd)
        fd = -1
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if fsync:
        fsync_dir(path.parent)


def private_dir(path: Path) -> bool:
    """Create ``path`` (one level) or reuse it, only if it is a real directory owned by us; force mode
    0700. False — never raises — when it is a symlink, someone else's, or cannot be made private:
    callers then refuse to write there rather than write through."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        return False
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return False
    if stat.S_IMODE(st.st_mode) != 0o700:
        try:
            os.chmod(path, 0o700, follow_symlinks=False)
        except (OSError, NotImplementedError):
            return False
    return True
