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
