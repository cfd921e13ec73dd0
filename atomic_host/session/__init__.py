"""The host's session layer: LLM context building, stats, the store factory, transfer, export.

The entry tree, the store protocol and the errors are public, in :mod:`atomic_host.kit.sessions`
(re-exported here); the stores themselves are plugins. ``import atomic_host.session`` is cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from atomic_host.contract.lazy_exports import lazy_exports

_LAZY = {
    "Session": "atomic_host.kit.sessions.tree",
    "EntryNotFound": "atomic_host.kit.sessions.errors",
    "SessionContext": "atomic_host.session.context",
    "build_session_context": "atomic_host.session.context",
    "convert_to_llm": "atomic_host.session.context",
    "SessionStore": "atomic_host.kit.sessions.store",
    "SessionNotFound": "atomic_host.kit.sessions.errors",
    "SessionNotSaved": "atomic_host.kit.sessions.errors",
    "open_store": "atomic_host.session.stores",
}

__all__ = list(_LAZY)

if TYPE_CHECKING:
    from atomic_host.kit.sessions.errors import EntryNotFound, SessionNotFound, SessionNotSaved
    from atomic_host.kit.sessions.store import SessionStore
    from atomic_host.kit.sessions.tree import Session
    from atomic_host.session.context import SessionContext, build_session_context, convert_to_llm
    from atomic_host.session.stores import open_store

__getattr__ = lazy_exports(__name__, _LAZY)
