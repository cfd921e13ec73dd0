"""Building many acyclic objects at once (a parsed session, a tree view, a listing):
:func:`gc_paused` keeps the cyclic collector from walking them while they are built
(``atomic_host.kit._fast.collector``; a plain ``with`` block under ``ATOMIC_PLAIN=1``)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Literal

from atomic_host.kit import _fast

__all__ = ["gc_paused"]

gc_paused: Callable[..., contextlib.AbstractContextManager[None]]
"""``with gc_paused(then="resume" | "promote" | "freeze"):`` around a bulk build of objects that
hold no reference cycles (see ``atomic_host.kit._fast.collector.gc_paused`` for ``then``)."""
if _fast.PLAIN:

    @contextlib.contextmanager
    def gc_paused(then: Literal["resume", "promote", "freeze"] = "resume") -> Iterator[None]:
        """The plain path: the collector runs as always."""
        yield

else:
    from atomic_host.kit._fast.collector import gc_paused
