"""The cyclic collector paused while many acyclic objects are built: the session-scale and startup bars.

Parsing a session, building its tree, a listing of 10,000 sessions and the host's own start each
allocate tens of thousands of containers at once. Every 700 allocations the collector walks the
young ones, and each walk that promotes them makes the next, older walks longer: past some tens of
thousands of entries those walks cost more than the work (figures: docs/performance.md). The
objects built there hold no cycles, so nothing is lost by not looking while they are built.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from typing import Literal


@contextlib.contextmanager
def gc_paused(then: Literal["resume", "promote", "freeze"] = "resume") -> Iterator[None]:
    """No cyclic collection inside the block; afterwards it resumes (if it was on), and first:

    - ``"promote"``: every tracked object moves to the oldest generation without being visited
      (``gc.freeze`` then ``gc.unfreeze``, two list splices). A freshly parsed session is some ten
      containers per entry, all young: left there, the next young collections would walk every one
      of them. Promoted, they wait for the next full collection, which comes as rarely as the old
      generation is big; an unreachable cycle among them is still collected then.
    - ``"freeze"``: every tracked object leaves the collector's view for good (``gc.freeze``): for
      what a start allocates and keeps for the life of the process (modules, classes, plugin
      registrations), never traversed again by any collection.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if then != "resume":
            gc.freeze()
            if then == "promote":
                gc.unfreeze()
        if enabled:
            gc.enable()


def pause_start() -> bool:
    """Pause the collector for the host's start (imports, plugin registration, the runtime);
    whether it was running. :func:`start_done` ends the pause."""
    collecting = gc.isenabled()
    gc.disable()
    return collecting


def start_done(collecting: bool) -> None:
    """End the pause of :func:`pause_start`: what the start allocated is frozen (``gc.freeze``).

    Starting allocates some 25,000 tracked objects (modules, functions, classes, plugin
    registrations) and leaves a few hundred of them as garbage; the collections their allocation
    triggers would traverse the live ones again and again. Frozen, they are never traversed again,
    by the first collection nor by any later one; the startup garbage among them stays (a few
    hundred objects)."""
    gc.freeze()
    if collecting:
        gc.enable()
