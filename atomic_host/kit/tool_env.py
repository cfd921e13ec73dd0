"""The environment of the processes the host starts for a model or a user: shell commands (the bash
tool, background processes, the RPC ``bash`` command, ``api.exec``), codemode and tool workers.

The host's own credentials stay out of it, so ``env | base64`` cannot carry a key past the output
masking (which only knows a key's plain forms). A variable is left out when

- its name contains ``KEY``, ``SECRET``, ``TOKEN`` (Codex's default shell policy), ``PASSWORD``,
  ``PASSWD``, ``CREDENTIAL`` or ``HEADERS`` (``OTEL_EXPORTER_OTLP_HEADERS`` carries a bearer token;
  Claude Code drops it too), in any case (:data:`SCRUBBED_NAME_PARTS`);
- a provider declared it as a key variable (``ProviderInfo.env_keys`` / ``secret_env``:
  :func:`declare`);
- or its value holds a credential the host knows (:mod:`atomic_host.kit.secrets`: keys from
  ``auth.json``, ``models.json``, ``--api-key``, OAuth tokens), whatever the variable is called.

The setting ``"shellEnv": {"passThrough": ["NAME", "AWS_*", …]}`` (exact names or ``fnmatch``
patterns, case-sensitive) keeps chosen variables anyway. What the caller sets explicitly (the bash
tool's ``env`` argument) is added after the scrub.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from typing import Any

from atomic_host.kit import secrets

__all__ = ["declare", "pass_through", "tool_environment"]

SCRUBBED_NAME_PARTS = ("KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL", "HEADERS")
"""A variable whose upper-cased name contains one of these is left out."""

_declared: set[str] = set()


def declare(names: Iterable[str]) -> None:
    """Remember ``names`` as credential variables (left out whatever they are called)."""
    _declared.update(n for n in names if isinstance(n, str) and n)


def pass_through(setting: Any) -> tuple[str, ...]:
    """The names and patterns of a ``shellEnv`` setting's ``passThrough`` (anything malformed: none)."""
    names = setting.get("passThrough") if isinstance(setting, dict) else None
    if not isinstance(names, list):
        return ()
    return tuple(n for n in names if isinstance(n, str) and n)


def scrubbed(name: str, value: str) -> bool:
    """Whether the variable ``name=value`` is left out of tool environments (before ``passThrough``)."""
    upper = name.upper()
    if any(part in upper for part in SCRUBBED_NAME_PARTS) or name in _declared:
        return True
    return secrets.active() and secrets.mask(value) != value


def _passed(name: str, keep: tuple[str, ...]) -> bool:
    return any(name == pattern or fnmatchcase(name, pattern) for pattern in keep)


def tool_environment(
    extra: Mapping[str, str] | None = None,
    *,
    keep: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """``environ`` (default ``os.environ``) without the credentials (see the module docstring),
    except the variables ``keep`` names or matches, then ``extra`` over it."""
    keep = tuple(keep)
    source = os.environ if environ is None else environ
    env = {k: v for k, v in source.items() if (keep and _passed(k, keep)) or not scrubbed(k, v)}
    if extra:
        env.update(extra)
    return env
