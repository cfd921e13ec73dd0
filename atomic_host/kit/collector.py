"""Pausing the cyclic garbage collector while the host builds many objects that hold no cycles.

Parsing a session, building its tree, a listing of 10,000 sessions and the host's own start each
allocate tens of thousands of containers at once. Every 700 allocations the collector walks the
young ones, and each walk that promotes them makes the next, older walks longer: at 40,000 entries
those walks cost more than the work (``get_tree`` 0.67 s instead of 0.07 s). The objects built
there hold no cycles, so nothing is lost by not looking while they are built.
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
