"""The owner-only temp tree for tool output: ``<tmpdir>/atomic-<uid>/<session-id>/``.

Other local users share ``/tmp``, so every component we create or reuse is checked: it must
be a real directory (not a symlink) owned by us, and is forced to mode 0700. Anything else is
refused (``None``) rather than written through.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from atomic_host.kit.fsio import private_dir

__all__ = ["new_private_file", "sanitize_id", "session_temp_dir"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def sanitize_id(value: str) -> str:
    """Make ``value`` safe as one path component (no separators, no ``..``)."""
    cleaned = _UNSAFE.sub("_", value).strip(".") or "session"
    return cleaned[:128]


def temp_root() -> Path:
    """``<tmpdir>/atomic-<uid>`` (not created)."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    import tempfile  # lazy: tempfile and secrets pull in random (~9 ms of host startup)

    return Path(tempfile.gettempdir()) / f"atomic-{uid}"


def session_temp_dir(session_id: str) -> Path | None:
    """Create (if needed) and return this session's private temp dir, or None if refused."""
    root = temp_root()
    if not private_dir(root):
        return None
    path = root / sanitize_id(session_id)
    if not private_dir(path):
        return None
    return path


def new_private_file(directory: Path, prefix: str, suffix: str) -> tuple[Path, int] | None:
    """Create ``<directory>/<prefix><16 hex><suffix>`` with mode 0600; return (path, fd)."""
    for _ in range(5):
        # lazy: secrets (hmac, random) only when a private file is created
        import secrets

        path = directory / f"{prefix}{secrets.token_hex(8)}{suffix}"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:
            continue
        except OSError:
            return None
        return path, fd
    return None
