"""Permission modes (docs/permissions.md): their names, ACP's names for them, and which one a host
starts in. Shared by the approvals plugin (which decides), the runtime (which blocks tool calls when
the plugin that would decide did not load) and the ACP frontend (which shows the modes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["ACP_MODES", "ACP_OF", "ASKING", "MODES", "mode_named", "startup_mode"]

MODES: tuple[str, ...] = ("default", "acceptEdits", "plan", "bypassPermissions")
"""Claude Code's names. ``default`` asks before every tool that is not read-only, ``acceptEdits``
lets ``edit``/``write`` in the working directory through, ``plan`` runs only read-only tools,
``bypassPermissions`` asks nothing (deny rules still refuse)."""

ASKING: frozenset[str] = frozenset({"default", "acceptEdits", "plan"})
"""The modes that ask for (or refuse without) approval: the gate fails closed in them."""

ACP_MODES: dict[str, tuple[str, str, str]] = {
    "default": ("default", "Ask", "Ask before every tool that is not read-only (commands, file changes, MCP tools)"),
    "accept_edits": (
        "acceptEdits",
        "Accept edits",
        "Change files in the project without asking; ask before the other tools that are not read-only",
    ),
    "read_only": ("plan", "Read only", "Run only read-only tools; refuse the others without asking"),
    "allow_all": ("bypassPermissions", "Allow all", "Run every tool without asking"),
}
"""ACP session mode id → (permission mode, name, description), in the order ACP clients list them."""

ACP_OF: dict[str, str] = {mode: acp for acp, (mode, _name, _description) in ACP_MODES.items()}
"""Permission mode → its ACP session mode id."""


def mode_named(value: Any) -> str | None:
    """The permission mode ``value`` names: one of :data:`MODES` or an ACP mode id; None otherwise."""
    if not isinstance(value, str):
        return None
    if value in MODES:
        return value
    acp = ACP_MODES.get(value)
    return acp[0] if acp else None


def startup_mode(
    option: str | None, setting: Callable[[str], Any], frontend: str, warn: Callable[[str], None] | None = None
) -> str | None:
    """The mode a host starts in: ``--permission-mode``, else (ACP) ``acp.defaultMode``, else
    ``permissions.defaultMode``, else ``default`` in ACP mode and None (unset: tools run without
    asking, as the protocol always did) elsewhere. A setting that names no mode counts as
    ``default`` (a typo must not turn approvals off) and is reported through ``warn``."""
    if option is not None:
        return mode_named(option) or "default"
    keys = ("acp.defaultMode", "permissions.defaultMode") if frontend == "acp" else ("permissions.defaultMode",)
    for key in keys:
        value = setting(key)
        if value is None:
            continue
        mode = mode_named(value)
        if mode is None and warn is not None:
            warn(f"{key} {value!r} is no permission mode ({', '.join(MODES)}): using default")
        return mode or "default"
    return "default" if frontend == "acp" else None
