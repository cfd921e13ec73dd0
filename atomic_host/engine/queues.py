"""MessageQueues: the steering and follow-up queues of one session, and their journal.

Every queued message (a ``steer`` / ``follow_up``, a ``prompt`` with ``streamingBehavior`` or
while paused, an extension's ``send_message`` queued while a run streams) is written to the
session the moment it is acknowledged, as a ``custom`` entry of type :data:`JOURNAL` — a kind of
entry that is never part of the model context, ``get_messages`` or the branch's messages. When
the message leaves the queue (delivered, or removed by ``clear_queue``) a second entry settles it.
``start_pending_recovery`` (``engine/recovery.py``) replays what a process that died left
unsettled: :func:`pending_deliveries` reads the journal back.

Journal records (the entry's ``data``)::

    {"op": "queued", "kind": "steer" | "followUp", "session": <session id>, "message": {...}}
    {"op": "settled", "ids": [<entry id of a queued record>, ...], "how": "delivered" | "cleared"}

A queued record is known by its entry id. ``session`` ties it to the session that wrote it: a
fork or clone copies entries into a new session, and what was queued in the old one is not the
new one's to deliver. A queued message whose own ``message`` / ``custom_message`` entry is in the
session is delivered even without its settle record (the process died between the two writes).

The session's lazy write applies (semantics §2.3): before the first assistant message nothing of
the session, the journal included, is on disk.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from typing import TYPE_CHECKING, Any

from atomic_host.contract.records import record
from atomic_host.kit.log import log
from atomic_host.kit.messages import message_text

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from atomic_host.kit.sessions.tree import Session

JOURNAL = "atomic.queue"
"""``customType`` of the journal's ``custom`` entries."""
KINDS = ("steer", "followUp")


@record
class Queued:
    """One queued message. ``text`` is what ``queue_update`` lists (None for custom messages from
    extensions: delivered like the others, never listed); ``journal_id`` is the entry id of its
    ``queued`` record (None when it could not be written)."""

    text: str | None
    message: dict[str, Any]
    journal_id: str | None = None


class UpdatePacer:
    """When the owner's ``queue_update`` goes out, so that the bytes written grow with the input,
    not with its square (each update lists the whole queue: 10,000 ``follow_up``s during a reply
    wrote 691 MB).

    A change is sent at once while its update is small (:data:`SMALL`, which covers every queue a
    person builds) or paid for by the credit: each change earns :data:`CREDIT_PER_CHANGE` plus
    :data:`CREDIT_PER_CHAR` per character it adds, and each update sent costs its size. A change
    that is neither waits, and so do the ones after it: one update with the state of that moment
    goes out once the credit covers it, or once the queue has not changed for :data:`QUIET_S`
    (the final state is always sent). Sizes are counted as they change, never by listing the
    queue (that alone would be quadratic)."""

    SMALL = 1024
    CREDIT_PER_CHANGE = 1024
    CREDIT_PER_CHAR = 2
    QUIET_S = 0.05

    def __init__(self, send: Callable[[], None]) -> None:
        self._send_ref = weakref.WeakMethod(send)
        """The owner's method, held weakly: the owner holds this pacer (no cycle keeps it alive)."""
        self.size = 0
        """Characters of the listed texts (plus three per text for quotes and comma)."""
        self.credit = 0
        self._waiting = False
        self._last_change = 0.0
        self._timer: asyncio.TimerHandle | None = None

    def changed(self, delta: int) -> None:
        """The listed texts changed by ``delta`` characters (negative: removed)."""
        self.size += delta
        self.credit += self.CREDIT_PER_CHANGE + self.CREDIT_PER_CHAR * max(delta, 0)
        cost = self.size + 40
        loop = asyncio._get_running_loop()
        if loop is None or cost <= self.SMALL or (not self._waiting and cost <= self.credit):
            self._send(cost)
            return
        self._waiting = True
        self._last_change = time.monotonic()
        if self._timer is None:
            self._timer = loop.call_later(self.QUIET_S, self._due)

    def _due(self) -> None:
        self._timer = None
        if not self._waiting:
            return
        cost = self.size + 40
        quiet_for = time.monotonic() - self._last_change
        if cost <= self.credit or quiet_for >= self.QUIET_S:
            self._send(cost)
        else:  # still changing, and not paid for: look again once it may have gone quiet
            self._timer = asyncio.get_running_loop().call_later(self.QUIET_S - quiet_for, self._due)

    def _send(self, cost: int) -> None:
        self._waiting = False
        self.credit -= cost
        send = self._send_ref()
        if send is not None:
            send()


@record
class Pending:
    """A queued record of the journal that was never settled (see :func:`pending_deliveries`)."""

    journal_id: str
    kind: str
    message: dict[str, Any]
    key: tuple[Any, ...] = ()
    """What its delivered entry looks like (see ``_delivered_key``)."""


class MessageQueues:
    """The loop's two queues in delivery order, the pause/hold state and the journal.

    ``on_change`` is called when the listed texts change (the owner emits ``queue_update``), paced
    by :class:`UpdatePacer` (a long queue changing fast gets fewer calls, the last state always
    one). A bound method is held weakly: the owner holds these queues, and a strong reference back would
    make the pair a cycle that keeps the owner's whole parsed session alive after a switch until
    a full collection (parsed sessions go straight to the old generation, ``kit/sessions/jsonl``):
    20-40 MB more at 2,000 turns."""

    def __init__(
        self, session: Session, on_change: Callable[[], None], steering_mode: str, follow_up_mode: str
    ) -> None:
        self.session = session
        self._on_change: Callable[[], Callable[[], None] | None] = (
            weakref.WeakMethod(on_change) if hasattr(on_change, "__self__") else lambda: on_change  # type: ignore[arg-type]
        )
        self.steering_queue: list[Queued] = []
        self.follow_up_queue: list[Queued] = []
        self.steering_mode = steering_mode
        self.follow_up_mode = follow_up_mode
        self.paused = False
        self.held = False
        """Set by abort: nothing queued is delivered until the next prompt starts a run (semantics §3.4)."""
        self.pacer = UpdatePacer(self.on_change)

    def on_change(self) -> None:
        """Tell the owner the queued texts changed (nothing once the owner is gone)."""
        callback = self._on_change()
        if callback is not None:
            callback()

    def _listed(self, items: Iterable[Queued], sign: int) -> None:
        """Listed texts were added (``sign`` 1) or removed (-1): pace the owner's update."""
        delta = sum(len(q.text) + 3 for q in items if q.text is not None)
        self.pacer.changed(sign * delta)

    # --- listing ---

    @property
    def steering(self) -> list[str]:
        """Queued steering texts, as listed in ``queue_update``."""
        return [q.text for q in self.steering_queue if q.text is not None]

    @property
    def follow_up(self) -> list[str]:
        """Queued follow-up texts, as listed in ``queue_update``."""
        return [q.text for q in self.follow_up_queue if q.text is not None]

    def journal_ids(self) -> set[str]:
        """The journal ids of what is queued in this process right now."""
        return {q.journal_id for q in (*self.steering_queue, *self.follow_up_queue) if q.journal_id}

    # --- queueing ---

    def enqueue(self, kind: str, message: dict[str, Any], text: str | None) -> None:
        """Queue ``message`` (``kind``: steer, else follow-up). The journal record is written
        first: when the session cannot be written this raises and nothing is queued."""
        kind = "steer" if kind == "steer" else "followUp"
        record = {"op": "queued", "kind": kind, "session": self.session.id, "message": message}
        entry = self.session.append("custom", customType=JOURNAL, data=record)
        self._put(kind, Queued(text, message, entry["id"]))

    def restore(self, pending: Iterable[Pending]) -> list[dict[str, Any]]:
        """Queue journal records again (recovery) under their own ids; returns their messages."""
        messages = []
        for item in pending:
            text = message_text(item.message) if item.message.get("role") == "user" else None
            self._put(item.kind, Queued(text, item.message, item.journal_id))
            messages.append(item.message)
        return messages

    def _put(self, kind: str, item: Queued) -> None:
        (self.steering_queue if kind == "steer" else self.follow_up_queue).append(item)
        if item.text is not None:
            self._listed([item], 1)

    def take(self, message: dict[str, Any]) -> None:
        """A queued message is being delivered: take it off its queue (by identity: a prompt
        with the same text as a queued one must not remove that one) and settle it."""
        for queue in (self.steering_queue, self.follow_up_queue):
            for i, item in enumerate(queue):
                if item.message is message:
                    del queue[i]
                    self._settle([item], "delivered")
                    if item.text is not None:
                        self._listed([item], -1)
                    return

    def clear(self) -> dict[str, list[str]]:
        """``clear_queue``: empty both queues; returns the texts that were listed."""
        data = {"steering": self.steering, "followUp": self.follow_up}
        items = [*self.steering_queue, *self.follow_up_queue]
        self.steering_queue.clear()
        self.follow_up_queue.clear()
        self._settle(items, "cleared")
        self._listed(items, -1)
        return data

    def _settle(self, items: list[Queued], how: str) -> None:
        ids = [q.journal_id for q in items if q.journal_id]
        if not ids:
            return
        try:
            self.session.append("custom", customType=JOURNAL, data={"op": "settled", "ids": ids, "how": how})
        except OSError as exc:
            # Delivered messages are recognised by their own entry too; a cleared one may come
            # back in a recovery. Either way the run goes on.
            log.warning(f"could not record queue change in the session: {exc}")

    # --- polling ---

    def _poll(self, queue: list[Queued], mode: str) -> list[dict[str, Any]]:
        if self.paused or self.held or not queue:
            return []
        items = queue if mode == "all" else queue[:1]
        # Messages stay queued until their message_start is processed (then ``take`` removes them).
        return [q.message for q in items]

    def poll_steering(self) -> list[dict[str, Any]]:
        return self._poll(self.steering_queue, self.steering_mode)

    def poll_follow_up(self) -> list[dict[str, Any]]:
        return self._poll(self.follow_up_queue, self.follow_up_mode)

    def next_queued(self) -> list[dict[str, Any]]:
        """What a new turn delivers from the queue: steering first, else follow-ups."""
        return self.poll_steering() or self.poll_follow_up()

    def resume(self) -> bool:
        released = self.paused
        self.paused = False
        return released


# --- reading the journal back ---


def _valid_message(message: Any) -> bool:
    if not isinstance(message, dict):
        return False
    role, content = message.get("role"), message.get("content")
    if role == "user":
        return isinstance(content, str) or (
            isinstance(content, list) and all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in content)
        )
    if role == "custom":
        return isinstance(message.get("customType"), str) and (
            isinstance(content, str) or (isinstance(content, list) and all(isinstance(b, dict) for b in content))
        )
    return False


def _delivered_key(entry: dict[str, Any]) -> tuple[Any, ...] | None:
    """What identifies a delivered queued message among the session's entries."""
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        if isinstance(message, dict) and message.get("role") == "user":
            return _queued_key(message)
    elif kind == "custom_message":  # saved without role and timestamp (AgentSession.record_message)
        return _queued_key({**entry, "role": "custom"})
    return None


def _queued_key(message: dict[str, Any]) -> tuple[Any, ...]:
    role = message.get("role")
    fields = ("content", "timestamp") if role == "user" else ("customType", "content", "details")
    return (role, *(_frozen(message.get(f)) for f in fields))


def _hint(message: dict[str, Any]) -> Any:
    """A cheap part of ``_queued_key``: equal keys have equal hints."""
    return (message.get("role"), _frozen(message.get("timestamp" if message.get("role") == "user" else "customType")))


def _hint_of_entry(entry: dict[str, Any]) -> Any:
    if entry.get("type") == "custom_message":
        return ("custom", _frozen(entry.get("customType")))
    message = entry.get("message")
    if not isinstance(message, dict) or message.get("role") != "user":
        return None
    return ("user", _frozen(message.get("timestamp")))


def _forget(by_hint: dict[Any, int], item: Pending) -> None:
    hint = _hint(item.message)
    if by_hint.get(hint, 0) <= 1:
        by_hint.pop(hint, None)
    else:
        by_hint[hint] -= 1


def _frozen(value: Any) -> Any:
    """A hashable, order-independent-for-dicts copy of a JSON value."""
    if isinstance(value, dict):
        return ("{", tuple(sorted((str(k), _frozen(v)) for k, v in value.items())))
    if isinstance(value, list):
        return ("[", tuple(_frozen(v) for v in value))
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def pending_deliveries(entries: Iterable[Any], session_id: str, exclude: set[str] | None = None) -> list[Pending]:
    """The queued records of ``entries`` (a session's entries in append order) that were never
    settled and whose message was never delivered, in delivery order: steering first, then
    follow-ups, each in the order they were queued. ``exclude``: ids queued in this process.

    Anything malformed (a record of another shape, another session's record, a settle of an
    unknown id) is skipped: the journal is read from a file anyone may have edited."""
    queued: dict[str, Pending] = {}
    # A cheap field first (user: timestamp, custom: customType): most message entries of a long
    # session are not a queued message, and comparing whole contents of each would be slow.
    by_hint: dict[Any, int] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        kind = entry.get("type")
        if kind == "message" or kind == "custom_message":
            try:
                key = _delivered_key(entry) if by_hint and _hint_of_entry(entry) in by_hint else None
            except RecursionError:  # absurdly nested content: not one of ours
                continue
            if key is not None:
                # a delivery settles the oldest unsettled queued record with the same message
                match = next((p for p in queued.values() if p.key == key), None)
                if match is not None:
                    del queued[match.journal_id]
                    _forget(by_hint, match)
            continue
        if entry.get("type") != "custom" or entry.get("customType") != JOURNAL:
            continue
        data, entry_id = entry.get("data"), entry.get("id")
        if not isinstance(data, dict) or not isinstance(entry_id, str):
            continue
        op = data.get("op")
        if op == "queued":
            if data.get("session") != session_id or data.get("kind") not in KINDS:
                continue
            message = data.get("message")
            if not _valid_message(message) or entry_id in queued:
                continue
            try:
                item = queued[entry_id] = Pending(entry_id, data["kind"], message, _queued_key(message))
            except RecursionError:
                continue
            hint = _hint(item.message)
            by_hint[hint] = by_hint.get(hint, 0) + 1
        elif op == "settled":
            ids = data.get("ids")
            if isinstance(ids, list):
                for settled in ids:
                    if isinstance(settled, str) and settled in queued:
                        _forget(by_hint, queued.pop(settled))
    skip = exclude or set()
    items = [p for p in queued.values() if p.journal_id not in skip]
    return [p for p in items if p.kind == "steer"] + [p for p in items if p.kind == "followUp"]
