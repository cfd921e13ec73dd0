"""``auth.json``: stored credentials per provider, written atomically with mode 0600.

Records: ``{"type": "api_key", "key": "...", "env"?: {...}}`` or
``{"type": "oauth", "access": "...", "refresh": "...", "expires": ms}``.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

FILE_MODE = 0o600


def read_config_text(path: Path) -> str:
    """``path.read_text("utf-8-sig")`` (a leading BOM dropped, universal newlines), without that
    codec: its module is imported at its first use (~0.8M instructions of a start that reads
    ``models.json``). Text that is no UTF-8 is read the old way, for the very same error."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return path.read_text("utf-8-sig")
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


class AuthFileError(ValueError):
    """auth.json exists but is not a JSON object; it is left untouched."""


def read_auth(path: Path) -> dict[str, Any]:
    """The parsed file; {} when missing. Raises AuthFileError when unreadable or malformed."""
    try:
        text = read_config_text(path)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise AuthFileError(f"Cannot read {path}: {exc}") from exc
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise AuthFileError(f"Invalid JSON in {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise AuthFileError(f"{path} must hold a JSON object")
    return data


def write_auth(path: Path, data: dict[str, Any]) -> None:
    """Replace ``path`` atomically: temp file in the same dir, mode 0600, fsync, ``os.replace``."""
    # lazy: tempfile pulls in random, off startup's path; only a write needs it
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    # Make the rename itself durable.
    with contextlib.suppress(OSError):
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def record_secret(record: Any) -> str | None:
    """The raw (uninterpolated) secret of a record, or None when it has none."""
    if not isinstance(record, dict):
        return None
    value = record.get("access") if record.get("type") == "oauth" else record.get("key")
    return value if isinstance(value, str) and value else None
