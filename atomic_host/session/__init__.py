"""Session storage: the entry tree of one session, LLM context building and the stores.

Heavy pieces (sqlite3, the stores) load on first use; ``import atomic_host.session`` is cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

_LAZY = {
    "Session": "atomic_host.session.tree",
    "EntryNotFound": "atomic_host.session.tree",
    "SessionContext": "atomic_host.session.context",
    "build_session_context": "atomic_host.session.context",
    "convert_to_llm": "atomic_host.session.context",
    "SessionStore": "atomic_host.session.store.base",
    "SessionNotFound": "atomic_host.session.store.base",
    "SessionNotSaved": "atomic_host.session.store.base",
    "open_store": "atomic_host.session.store.base",
}

__all__ = [
    "EntryNotFound",
    "Session",
    "SessionContext",
    "SessionNotFound",
    "SessionNotSaved",
    "SessionStore",
    "build_session_context",
    "convert_to_llm",
    "open_store",
]

if TYPE_CHECKING:
    from atomic_host.session.context import SessionContext, build_session_context, convert_to_llm
    from atomic_host.session.store.base import SessionNotFound, SessionNotSaved, SessionStore, open_store
    from atomic_host.session.tree import EntryNotFound, Session


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'atomic_host.session' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
