"""The host's store factory: the ``sessionStore`` kind looked up among the registered stores.

Store kinds are contributions (``register_session_stores``): the built-in ``stores`` plugin gives
``jsonl``, ``sqlite`` and ``memory``, any plugin may add its own. The host never names an
implementation; ``--no-session`` uses :class:`~atomic_host.kit.sessions.store.MemoryStore` directly,
so it works even when no store plugin is loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from atomic_host.contract.tools import resolve

if TYPE_CHECKING:
    from atomic_host.contract.registrations import SessionStoreFactory, StoreOptions
    from atomic_host.kit.sessions.store import SessionStore

DEFAULT_KIND = "jsonl"


class UnknownStoreKind(ValueError):
    """``sessionStore`` / ``--session-store`` names a kind no loaded plugin registered."""


def open_store(
    factories: Mapping[str, SessionStoreFactory], kind: str, options: StoreOptions, *, hint: str = ""
) -> SessionStore:
    """Open the store of ``kind`` with ``options``; an unknown kind raises :class:`UnknownStoreKind`
    naming the kinds that are registered (``hint`` is appended, e.g. a disabled store plugin)."""
    factory = factories.get(kind)
    if factory is None:
        known = ", ".join(sorted(factories)) or "none"
        raise UnknownStoreKind(
            f'Unknown session store "{kind}" (sessionStore setting / --session-store); known kinds: {known}'
            + (f". {hint}" if hint else "")
        )
    return resolve(factory.open)(options)


__all__ = ["DEFAULT_KIND", "UnknownStoreKind", "open_store"]
