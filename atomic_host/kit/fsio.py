"""Durable and private file-system helpers: the one ``atomic_write``, ``private_dir`` and
``ensure_private_dir``, and ``read_json_object`` for JSON configuration files."""

from __future__ import annotations

import contextlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from atomic_host.kit.log import log

__all__ = ["atomic_write", "ensure_private_dir", "fsync_dir", "private_dir", "read_json_object", "write_all"]


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


def atomic_write(
    path: Path, data: str | bytes, mode: int | None = 0o644, *, fsync: bool = True, exclusive: bool = False
) -> bool:
    """Replace ``path`` with ``data`` (str is UTF-8 encoded) so readers see the old or the new file,
    never a part: a unique temp file in the same directory, fsync, chmod ``mode``, rename over the
    target, fsync the directory. ``mode=None`` keeps the existing file's permission bits (a new
    file gets ``0o666`` less the umask, as ``open`` would). Missing parent directories are created;
    on failure the temp file is removed and the target is untouched.

    ``exclusive``: only create ``path``, never replace it (a hard link in place of the rename, which
    fails when the name is taken, even by a symlink); returns False, writing nothing, when it is."""
    import tempfile  # lazy: tempfile pulls in random (~9 ms of host startup)

    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        mode = _existing_mode(path)
    raw = data.encode() if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        write_all(fd, raw)
        if fsync:
            os.fsync(fd)
        os.close(fd)
        fd = -1
        os.chmod(tmp, mode)
        if exclusive:
            try:
                os.link(tmp, path)
            except FileExistsError:
                return False
            finally:
                os.unlink(tmp)
        else:
            os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if fsync:
        fsync_dir(path.parent)
    return True


def _existing_mode(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


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


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` (and parents) owner-only; tighten an existing leaf we own."""
    # pathlib creates missing parents with the umask mode (often 0755): create them ourselves so
    # e.g. ``<agentDir>/sessions`` is private too. Existing ancestors are left as they are.
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            directory.mkdir(mode=0o700)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        if path.stat().st_mode & 0o077:
            path.chmod(0o700)
    except OSError:
        pass


def read_json_object(path: Path, what: str) -> dict[str, Any]:
    """A JSON object file (a BOM is allowed): missing or empty → ``{}``; unreadable, corrupt or not
    an object → ``{}`` with a warning naming ``what`` on stderr (a broken config file never stops
    the host)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        log.warning(f"cannot read {what} {path}: {exc}")
        return {}
    except UnicodeDecodeError as exc:  # not UTF-8: as corrupt as bad JSON, never a crash at startup
        log.warning(f"ignoring corrupt {what} {path}: {exc}")
        return {}
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        log.warning(f"ignoring corrupt {what} {path}: {exc}")
        return {}
    if not isinstance(data, dict):
        log.warning(f"ignoring {what} {path}: not a JSON object")
        return {}
    return data
