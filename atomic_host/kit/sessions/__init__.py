"""Sessions for store authors: what a ``register_session_stores`` contribution builds on.

``tree`` (:class:`~atomic_host.kit.sessions.tree.Session`, the entry tree a store returns),
``store`` (the :class:`~atomic_host.kit.sessions.store.SessionStore` protocol, :class:`BaseStore`
with fork/clone, :class:`MemoryStore`), ``errors`` (what a store raises and the host catches),
``jsonl`` (Atomic's session file format), ``listing`` (the ``list_sessions`` record, kept up to
date on append) and ``ids`` (ids and timestamps in the format's shapes). The built-in ``jsonl``
and ``sqlite`` stores (``builtin_plugins.stores``) use nothing else of the host.
"""

__all__ = ["errors", "ids", "jsonl", "listing", "repair", "store", "tree"]
