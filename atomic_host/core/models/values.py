"""Config value resolution for API keys and headers: ``$VAR``, ``${VAR}``, ``!command``, escapes.

- ``"!cmd"`` runs ``cmd`` with the shell and uses its stripped stdout (None if it fails or prints nothing).
- ``$VAR`` / ``${VAR}`` anywhere in the text read the environment (a value that is only a reference
  to an unset variable resolves to None; inside longer text an unset variable becomes "").
- ``$$`` is a literal ``$``; ``$!`` a literal ``!`` (so ``"$!abc"`` is the literal ``"!abc"``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

_REF = r"\$\$|\$!|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)"
"""Compiled (and cached by ``re``) when the first value with a ``$`` is resolved, not at every start:
every alternative starts with ``$``, so a value without one is its own expansion (most keys and
headers: ``"apiKey": "sk-..."``), and the compilation (~0.9M instructions) waits for one that has."""
COMMAND_TIMEOUT_S = 30.0


def is_command(value: str) -> bool:
    """True when ``value`` is a ``!command``."""
    return value.startswith("!")


def env_refs(value: str) -> list[str]:
    """Names of the environment variables ``value`` references."""
    if "$" not in value:
        return []
    return [m.group(1) or m.group(2) for m in re.finditer(_REF, value) if m.group(1) or m.group(2)]


def interpolate(value: str, env: Mapping[str, str]) -> str | None:
    """Expand ``$VAR``/``${VAR}`` and the escapes; None for a lone reference to an unset variable."""
    if "$" not in value:
        return value
    whole = re.fullmatch(_REF, value)
    if whole and (whole.group(1) or whole.group(2)):
        return env.get(whole.group(1) or whole.group(2)) or None

    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        if m.group(0) == "$!":
            return "!"
        return env.get(m.group(1) or m.group(2), "")

    return re.sub(_REF, sub, value)


def run_command(command: str, env: Mapping[str, str]) -> str | None:
    """Run ``command`` with the shell; stripped stdout, or None on failure / empty output."""
    import subprocess  # only when a key is a command; keeps startup lean

    try:
        done = subprocess.run(command, shell=True, capture_output=True, text=True,
                              timeout=COMMAND_TIMEOUT_S, env={**os.environ, **env}, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    out = done.stdout.strip()
    return out if done.returncode == 0 and out else None


def resolve_value(value: str, env: Mapping[str, str]) -> str | None:
    """Resolve one config value (command or interpolated text); None or "" means "no value"."""
    if is_command(value):
        return run_command(value[1:], env)
    return interpolate(value, env) or None
