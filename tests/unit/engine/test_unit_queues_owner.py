"""MessageQueues must not keep its owner alive: the owner (AgentSession) holds the queues, so a
strong reference back would make a cycle, and a switched-away session (whose parsed entries live in
the GC's old generation) would stay in memory until a full collection: 102 → 62 MB of RSS after
8 switches of a 2,000-turn session when the cycle went."""

from __future__ import annotations

import gc
import weakref

from atomic_host.engine.queues import MessageQueues
from atomic_host.kit.sessions.store import MemoryStore


class Owner:
    def __init__(self, session: object) -> None:
        self.changes = 0
        self.queues = MessageQueues(session, self.emit, "one-at-a-time", "one-at-a-time")  # type: ignore[arg-type]

    def emit(self) -> None:
        self.changes += 1


def test_the_owner_is_freed_by_reference_counting_and_still_told_of_changes() -> None:
    session = MemoryStore().new_session("/tmp")
    owner = Owner(session)
    owner.queues.on_change()
    assert owner.changes == 1
    gone = weakref.ref(owner)
    queues = owner.queues
    enabled = gc.isenabled()
    gc.disable()
    try:
        del owner
        assert gone() is None  # no cycle: freed at once, without the cyclic GC
    finally:
        if enabled:
            gc.enable()
    queues.on_change()  # the owner is gone: nothing to tell, nothing raised


def test_a_plain_function_is_held_as_it_is() -> None:
    calls: list[int] = []
    queues = MessageQueues(MemoryStore().new_session("/tmp"), lambda: calls.append(1), "all", "all")  # type: ignore[arg-type]
    queues.on_change()
    assert calls == [1]
