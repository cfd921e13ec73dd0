"""Shapes of the contributions the next registration hooks take (issue 9, phase B).

``register_workflows`` takes ``register(WorkflowDefinition(...))`` (issue 11). The others only fix
their shape so far: ``export_html`` and the session stores are still wired in directly (see
docs/architecture.md, "Phase B"); ``register_exporters`` / ``register_session_stores`` will take
``register(<one of these>)`` like ``register_tools`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from atomic_host.contract.records import field, record


@record
class Exporter:
    """Turns a session's active branch into a file (``export_html`` is the built-in ``html`` one)."""

    name: str
    """What ``export_html`` / ``atomic sessions export --format`` ask for, e.g. ``html``."""
    render: Callable[[dict[str, Any], list[dict[str, Any]], str | None], str] | str
    """``render(header, entries, leaf_id) -> text`` (or a ``"module:function"`` string, resolved on use)."""
    default_path: Callable[[Any], str] | str
    """``default_path(session) -> path`` when the client names none."""
    plugin: str = ""


@record
class SessionStoreFactory:
    """A session store kind (``sessionStore`` setting / ``--session-store``): jsonl, sqlite, memory, …"""

    kind: str
    open: Callable[..., Any] | str
    """``open(agent_dir, session_dir, cwd, *, fsync) -> SessionStore`` (or ``"module:function"``)."""
    plugin: str = ""


@record
class WorkflowDefinition:
    """A named workflow: stages run one after another, each in its own internal child session.

    ``steps``: one dict per stage, ``{"name": str, "prompt": str}`` (an agent run; ``{input}`` and
    ``{stages.<name>.output}`` are filled in, ``{{``/``}}`` are literal braces) or
    ``{"name": str, "run": async (ctx) -> str}`` (Python code, or a ``"module:function"`` string);
    optional ``models`` (fallback tiers, ``provider/model[:level]``), ``thinking``, ``tools``.
    """

    name: str
    description: str = ""
    steps: list[dict[str, Any]] = field(default_factory=list)
    plugin: str = ""
    path: str = ""
    """Where it was defined (a TOML file; empty for Python definitions)."""
