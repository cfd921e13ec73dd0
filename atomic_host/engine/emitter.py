"""Where a session's events go: the frontend's sink, then the ``on_event`` observers.

Every part of a session (engine/active.py, runner.py, compaction.py, …) holds the same
:class:`Emitter`; it references only the host's services, so holding it makes no cycle between the
parts. An internal child session swaps in one that keeps its events inside the host
(``engine/internal.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from atomic_host.engine.services import HostServices


class Emitter:
    """``emit(event, line=None)``: to the client (``line``: the event's JSON when already encoded) and to observers."""

    __slots__ = ("_rt",)

    def __init__(self, rt: HostServices) -> None:
        self._rt = rt

    def __call__(self, event: dict[str, Any], line: str | None = None) -> None:
        rt = self._rt
        rt.out.send(event, line)
        if rt.hooks.has_impls("on_event"):
            rt.hooks.call("on_event", event=event)
