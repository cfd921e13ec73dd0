"""Where atomic-host keeps its files."""

from __future__ import annotations

import os
from pathlib import Path


def agent_dir(env: os._Environ[str] | dict[str, str] | None = None) -> Path:
    """The agent dir: ``$ATOMIC_CODING_AGENT_DIR``, ``$PI_CODING_AGENT_DIR``, else ``~/.atomic/agent``."""
    env = os.environ if env is None else env
    for var in ("ATOMIC_CODING_AGENT_DIR", "PI_CODING_AGENT_DIR"):
        if env.get(var):
            return Path(env[var]).expanduser()
    return Path.home() / ".atomic" / "agent"


def project_dir(cwd: str) -> Path:
    """The project's own config dir ``<cwd>/.atomic``."""
    return Path(cwd) / ".atomic"


def atomic_write(path: Path, data: str | bytes, mode: int = 0o644) -> None:
    """Write a file atomically: temp file in the same dir, fsync, rename over the target."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    raw = data.encode() if isinstance(data, str) else data
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, raw)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(tmp, mode)
    os.replace(tmp, path)
