"""What the registration hooks take: ``register(<one of these>)``, like ``register_tools`` takes a Tool.

``register_exporters`` takes an :class:`Exporter`, ``register_session_stores`` a
:class:`SessionStoreFactory` (opened with a :class:`StoreOptions`), ``register_workflows`` a
:class:`WorkflowDefinition`. The host fills in ``plugin``. A later registration of the same name
replaces an earlier one (load order: built-ins, installed packages, local files), so a plugin can
replace a built-in exporter or store kind; the host says so on stderr.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from atomic_host.contract.records import field, record

if TYPE_CHECKING:
    from pathlib import Path


@record
class Exporter:
    """Turns a session's active branch into a file (the built-in ``html`` one answers ``export_html``
    and ``atomic --export``)."""

    name: str
    """What ``export_html`` (``html``) and ``atomic --export … --export-format NAME`` ask for."""
    render: Callable[[dict[str, Any], list[dict[str, Any]], str | None], str] | str
    """``render(header, entries, leaf_id) -> text``: ``header`` is the session record, ``entries`` every
    entry in append order, ``leaf_id`` the active branch's tip (or a ``"module:function"`` string,
    resolved on first use). The host writes the text atomically, UTF-8."""
    default_path: Callable[[Any], str] | str
    """``default_path(session) -> path`` when the client names none (``session`` has ``id``,
    ``location``, ``header``, ``entries``, ``leaf_id``); relative paths are taken from the cwd."""
    plugin: str = ""


@record
class StoreOptions:
    """Where and how a session store keeps its data (what ``SessionStoreFactory.open`` gets)."""

    agent_dir: Path
    """The agent directory (``ATOMIC_CODING_AGENT_DIR``, default ``~/.atomic/agent``)."""
    session_dir: Path | None
    """``--session-dir`` > ``ATOMIC_CODING_AGENT_SESSION_DIR`` > settings ``sessionDir``; None: the store's default."""
    cwd: str
    """The project: ids are looked up, listed and deleted among this cwd's sessions."""
    fsync: bool = True
    """Settings ``sessionFsync``: True (``always``, the default) means an acknowledged entry survives
    power loss; False (``never``) only a process crash."""
    settings: Any = None
    """The host's settings (``settings.get("dotted.key")``), for a store's own keys (``postgres``
    reads ``database.url``); None outside a host (scripts, tests)."""


@record
class SessionStoreFactory:
    """A session store kind, chosen by the ``sessionStore`` setting or ``--session-store``."""

    kind: str
    """``jsonl``, ``sqlite``, ``memory`` (built-in) or a plugin's own, e.g. ``postgres``."""
    open: Callable[[StoreOptions], Any] | str
    """``open(options) -> SessionStore`` (the protocol of :mod:`atomic_host.kit.sessions.store`; a
    ``"module:function"`` string is resolved on use). Called once, the first time the host needs
    its store."""
    description: str = ""
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
