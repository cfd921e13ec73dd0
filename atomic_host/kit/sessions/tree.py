"""One open session: the append-only entry tree, its leaf, labels, and lazy persistence.

Entries are plain dicts with the wire's camelCase keys. A store supplies a ``SessionWriter``;
this class decides *when* to write (§2.3 lazy write) and unpublishes an entry whose write failed.
"""

from __future__ import annotations

import operator
import threading
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator
from itertools import compress, repeat
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from atomic_host.kit import secrets
from atomic_host.kit.collector import gc_paused
from atomic_host.kit.messages import message_text
from atomic_host.kit.sessions.behind import WriteBehind, on_loop
from atomic_host.kit.sessions.errors import EntryNotFound, SessionWriteFailed
from atomic_host.kit.sessions.ids import ms_from_iso, new_entry_id, now_iso
from atomic_host.kit.sessions.repair import repair_entries, report_repairs

if TYPE_CHECKING:
    import asyncio

__all__ = ["Session", "SessionWriter", "is_internal_header"]


class SessionWriter(Protocol):
    """What a store gives a Session to persist it."""

    def write_all(self, header: dict[str, Any], entries: list[dict[str, Any]]) -> None:
        """Write header and every entry at once (the first, lazy flush)."""

    def append(self, entry: dict[str, Any]) -> None:
        """Durably add one entry; raise (leaving the store as before) on failure, and
        :class:`~atomic_host.kit.sessions.errors.SessionFileGone` when the session was deleted
        from the store while open (never recreate it)."""

    def close(self) -> None:
        """Release handles; the session may be reopened later."""


# A writer may also have ``write_thread``: an executor with one worker, on which the session then
# runs its writes, off the event loop (kit/sessions/behind.py). ``append`` and ``write_all`` are
# called there, in order; ``close`` too, after the writes before it.


class EntryView(Protocol):
    """A value derived from a session's entries, fed them one at a time in append order (see
    :meth:`Session.view`)."""

    def add(self, entry: dict[str, Any]) -> None:
        """Take one more entry into account. When it raises, the view must be as it was before
        the call (the same entry is offered again next time)."""


V = TypeVar("V", bound=EntryView)


class _Slot:
    """One view of a session and how many entries it has taken."""

    __slots__ = ("count", "lock", "view")

    def __init__(self, view: Any) -> None:
        self.view = view
        self.count = 0
        self.lock = threading.Lock()  # a thread (get_tree) and the loop may catch the same view up


def _count_types(types: list[Any]) -> Counter[Any]:
    """Entries per ``type`` (a type that is not hashable, in a hand-made file, is not counted).

    By the few kinds there are: ``set`` finds them in one C loop, ``list.count`` counts each
    (pointer comparisons); ``Counter(types)`` would add one to an int in a dict per entry, more
    than twice the instructions at 4,000 entries."""
    try:
        kinds = set(types)
    except TypeError:
        kinds = {kind for kind in types if isinstance(kind, Hashable)}
    return Counter({kind: types.count(kind) for kind in kinds})


def is_assistant_entry(entry: dict[str, Any]) -> bool:
    message = entry.get("message")
    return entry.get("type") == "message" and isinstance(message, dict) and message.get("role") == "assistant"


def _role(entry: dict[str, Any]) -> str | None:
    message = entry.get("message")
    if entry.get("type") == "message" and isinstance(message, dict):
        role = message.get("role")
        return role if isinstance(role, str) else None
    return None


class Session:
    """One open session. ``entries`` is append order without the header; the leaf is in memory only."""

    def __init__(
        self,
        header: dict[str, Any],
        entries: Iterable[dict[str, Any]] = (),
        *,
        writer: SessionWriter | None = None,
        location: str | None = None,
        persisted: bool = False,
        cwd_override: str | None = None,
    ) -> None:
        self.header = header
        self.entries: list[dict[str, Any]] = []
        self._clear()
        self.writer = writer
        self.location = location
        self.persisted = persisted
        self.cwd_override = cwd_override
        self.repairs: list[str] = []
        """What :func:`~atomic_host.kit.sessions.repair.repair_entries` changed when the entries
        were loaded (reported once, on stderr); empty for a well-formed session."""
        thread = getattr(writer, "write_thread", None)
        self._behind = WriteBehind(thread, location or self.id) if thread is not None else None
        """The writes in flight when the store writes behind (module note above ``EntryView``)."""
        self._load(entries)
        self.repairs += [
            f"entry {self.entries[i].get('id')}: the message is not an object (left out of the context)"
            for i in self._odd_messages
        ]
        report_repairs(location or self.id, self.repairs)

    def _clear(self) -> None:
        """No entries: what :meth:`_load` builds on."""
        self._index: dict[str, int] = {}
        self._starts: list[int] = []
        """Where each run of the append order starts: an entry whose parent is not the entry just
        before it (see :meth:`branch`). A session appended to one prompt after another is one run."""
        self._labels: dict[str, tuple[str, str]] = {}
        self._has_assistant = False
        self._info_entry: dict[str, Any] | None = None  # the latest session_info (the name)
        self._types: list[Any] = []
        """Each entry's ``type``, in append order (what :meth:`count_of` and context sizes read)."""
        self._type_counts: Counter[Any] = Counter()
        self._odd_messages: list[int] = []
        """Positions of ``message`` entries whose message is not an object (they add nothing to
        a context): none in any file this host writes."""
        self._views: dict[Callable[[], Any], _Slot] = {}
        self.leaf_id: str | None = None

    def _load(self, entries: Iterable[dict[str, Any]]) -> None:
        """Bulk ``_add`` for opening long sessions: same result, with the per-entry work done by
        C loops (``map``, ``zip``, list comparison) instead of Python ones; a 4,000-entry session
        takes ~0.2 ms instead of ~1.5."""
        entries, self.repairs = repair_entries(list(entries))
        self.entries = entries
        if not entries:
            return
        ids = list(map(dict.get, entries, repeat("id")))
        types = list(map(dict.get, entries, repeat("type")))
        if set(map(type, ids)) == {str}:
            self._index = index = dict(zip(ids, range(len(ids)), strict=True))
            self.leaf_id = ids[-1]
            # every entry the child of the one before it (a session never navigated back), ids
            # unique: one run, found by one comparison of two lists
            linear = len(index) == len(ids) and list(map(dict.get, entries[1:], repeat("parentId"))) == ids[:-1]
        else:
            self._index = index = {}
            for position, entry_id in enumerate(ids):
                if isinstance(entry_id, str):
                    index[entry_id] = position
                    self.leaf_id = entry_id
            linear = False
        self._starts = [0] if linear else self._run_starts()
        self._types = types
        self._type_counts = counts = _count_types(types)  # the two checks below read it
        if counts["label"]:
            for entry in compress(entries, map(operator.eq, types, repeat("label"))):
                self._apply_label(entry)
        if counts["session_info"]:
            self._info_entry = entries[len(types) - 1 - types[::-1].index("session_info")]
        is_message = list(map(operator.eq, types, repeat("message")))
        self._has_assistant = any(map(is_assistant_entry, compress(entries, is_message)))  # stops at the first one
        # messages that are objects: every one, checked by one C loop (the entries are still in
        # the cache from parsing); a file holding others finds their positions step by step
        bodies = map(dict.get, compress(entries, is_message), repeat("message"))
        if not set(map(type, bodies)) <= {dict}:
            self._odd_messages = [
                i for i in compress(range(len(entries)), is_message) if not isinstance(entries[i].get("message"), dict)
            ]

    def _run_starts(self) -> list[int]:
        """The positions where a run starts (``_starts``), by the final index: with duplicate ids
        a parent id names the last entry holding it, as :meth:`branch`'s walk finds it."""
        index, starts = self._index, []
        for position, entry in enumerate(self.entries):
            parent = entry.get("parentId")
            if not (isinstance(parent, str) and index.get(parent) == position - 1):
                starts.append(position)
        return starts

    # -- identity -------------------------------------------------------------------------------
    @property
    def id(self) -> str:
        return str(self.header.get("id", ""))

    @property
    def cwd(self) -> str:
        if self.cwd_override is not None:
            return self.cwd_override
        cwd = self.header.get("cwd")
        return cwd if isinstance(cwd, str) else ""

    @property
    def parent_session(self) -> str | None:
        value = self.header.get("parentSession")
        return value if isinstance(value, str) else None

    @property
    def is_internal(self) -> bool:
        return is_internal_header(self.header)

    # -- appending ------------------------------------------------------------------------------
    def _add(self, entry: dict[str, Any]) -> None:
        parent = entry.get("parentId")
        if not (isinstance(parent, str) and self._index.get(parent) == len(self.entries) - 1):
            self._starts.append(len(self.entries))
        self.entries.append(entry)
        entry_id = entry.get("id")
        if isinstance(entry_id, str):
            self._index[entry_id] = len(self.entries) - 1
            self.leaf_id = entry_id
        if is_assistant_entry(entry):
            self._has_assistant = True
        kind = entry.get("type")
        self._types.append(kind)
        if isinstance(kind, Hashable):
            self._type_counts[kind] += 1
        if kind == "message" and not isinstance(entry.get("message"), dict):
            self._odd_messages.append(len(self.entries) - 1)
        if kind == "label":
            self._apply_label(entry)
        elif kind == "session_info":
            self._info_entry = entry

    def _apply_label(self, entry: dict[str, Any]) -> None:
        target = entry.get("targetId")
        if not isinstance(target, str):
            return
        label = entry.get("label")
        if isinstance(label, str) and label:
            self._labels[target] = (label, str(entry.get("timestamp", "")))
        else:
            self._labels.pop(target, None)

    def append(self, entry_type: str, **fields: Any) -> dict[str, Any]:
        """Append a new entry as a child of the leaf, move the leaf to it and persist it (lazily)."""
        entry: dict[str, Any] = {
            "type": entry_type,
            "id": new_entry_id(self._index),
            "parentId": self.leaf_id,
            "timestamp": now_iso(),
            **fields,
        }
        return self.append_entry(entry)

    def append_entry(self, entry: dict[str, Any]) -> dict[str, Any]:
        """Append a fully formed entry (id, parentId, timestamp already set). Known credentials are
        masked first (a copy; the caller's dict is left alone), so no store ever persists one.

        With a store that writes behind, the write is queued and this returns at once; a write of
        this session that failed meanwhile is raised here first (:meth:`settled`)."""
        entry = secrets.mask_obj(entry)
        if not isinstance(entry.get("id"), str) or entry["id"] in self._index:
            raise ValueError(f"entry id missing or duplicate: {entry.get('id')!r}")
        behind = self._writes_behind()
        previous_leaf, previous_labels, had_assistant = self.leaf_id, dict(self._labels), self._has_assistant
        previous_info = self._info_entry
        self._add(entry)
        try:
            if self.writer is not None:
                if self.persisted:
                    self._write(behind, self.writer.append, entry)
                elif self._has_assistant:  # behind: the loop goes on appending, the thread gets a copy
                    entries = list(self.entries) if behind else self.entries
                    self._write(behind, self.writer.write_all, self.header, entries)
                    self.persisted = True
        except BaseException:
            # Unpublish: the entry never happened, in memory as on disk.
            self.entries.pop()
            kind = self._types.pop()
            if isinstance(kind, Hashable):
                self._type_counts[kind] -= 1
            if self._odd_messages and self._odd_messages[-1] == len(self.entries):
                self._odd_messages.pop()
            if self._starts[-1] == len(self.entries):
                self._starts.pop()
            del self._index[entry["id"]]
            self.leaf_id, self._labels, self._has_assistant = previous_leaf, previous_labels, had_assistant
            self._info_entry = previous_info
            self._views = {}  # they may have taken the entry: rebuilt on the next read
            raise
        return entry

    def append_message(self, message: dict[str, Any]) -> dict[str, Any]:
        return self.append("message", message=message)

    def append_model_change(self, provider: str, model_id: str) -> dict[str, Any]:
        return self.append("model_change", provider=provider, modelId=model_id)

    def append_thinking_level_change(self, level: str) -> dict[str, Any]:
        return self.append("thinking_level_change", thinkingLevel=level)

    def append_label(self, target_id: str, label: str | None) -> dict[str, Any]:
        """Set (or clear, with None/empty) the label of an entry. Unknown target → EntryNotFound."""
        if target_id not in self._index:
            raise EntryNotFound(f"Entry {target_id} not found")
        label = label.strip() if isinstance(label, str) else None
        return self.append("label", targetId=target_id, **({"label": label} if label else {}))

    def append_session_info(self, name: str) -> dict[str, Any]:
        return self.append("session_info", name=name.strip())

    def _writes_behind(self) -> WriteBehind | None:
        """Before a write: where it goes behind, when the store writes behind and an event loop runs
        on this thread; else None, once the writes handed over before it are done. Either way a
        write that failed meanwhile is raised (:meth:`_raise_failed_write`)."""
        behind = self._behind
        if behind is None:
            return None
        if not on_loop():
            behind.drain()
            behind = None
        self._raise_failed_write()
        return behind

    def _write(self, behind: WriteBehind | None, write: Callable[..., None], *args: Any) -> None:
        """Persist the entry just added (the last one): now, or queued behind the writes before it."""
        if behind is None:
            _store_write(write, *args)
        else:
            behind.submit(lambda: _store_write(write, *args), len(self.entries) - 1, self.persisted)

    def flush(self) -> None:
        """Write now even without an assistant message (import, explicit save): synchronous,
        whatever the store (the host calls it off the loop)."""
        if self.writer is not None and not self.persisted:
            if self._behind is not None:
                self._behind.drain()
                self._raise_failed_write()
            _store_write(self.writer.write_all, self.header, self.entries)
            self.persisted = True

    def write_mark(self) -> int:
        """How many writes this session has handed to its store's write thread (0 for a store that
        writes synchronously): :meth:`settled` with it waits only when more were handed over since."""
        return self._behind.submitted if self._behind is not None else 0

    async def settled(self, since: int | None = None, abort: asyncio.Event | None = None) -> None:
        """The flush barrier: return once every write of this session handed over so far is done
        (at once for a synchronous store, or when none was handed over since the mark ``since``).
        A failed write is raised (as the append that made it would have raised), after taking back
        every entry that was not stored. ``abort`` set: stop waiting (the writes go on)."""
        behind = self._behind
        if behind is None or (since is not None and behind.submitted == since):
            return
        await behind.wait(abort)
        self._raise_failed_write()

    def _raise_failed_write(self) -> None:
        """A write that failed on the write thread: the entries from it on were not stored, so they
        go (as a failed synchronous append unpublishes its entry), and its error is raised."""
        failure = self._behind.take_failure() if self._behind is not None else None
        if failure is None:
            return
        dropped = self.entries[failure.keep :]
        kept = self.entries[: failure.keep]
        leaf = dropped[0].get("parentId") if dropped else self.leaf_id
        repairs = self.repairs
        self._clear()
        self._load(kept)
        self.repairs = repairs
        if leaf is None or leaf in self._index:
            self.leaf_id = leaf  # where the leaf was when the first dropped entry was appended
        self.persisted = failure.persisted
        raise failure.error

    def close(self) -> None:
        if self.writer is None:
            return
        if self._behind is not None and on_loop():  # after the writes before it: they hold the lock
            self._behind.submit_always(self.writer.close)
            return
        if self._behind is not None:
            self._behind.drain()
        self.writer.close()

    # -- reading --------------------------------------------------------------------------------
    def get_entry(self, entry_id: str) -> dict[str, Any] | None:
        index = self._index.get(entry_id)
        return None if index is None else self.entries[index]

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._index

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def has_assistant(self) -> bool:
        return self._has_assistant

    def branch_is_every_entry(self) -> bool:
        """True when :meth:`branch` is ``entries`` itself: the session is one run of
        parent-after-child entries (never navigated back) and the leaf is its last entry."""
        if self._starts != [0] or self.leaf_id is None or self._index.get(self.leaf_id) != len(self.entries) - 1:
            return False
        parent = self.entries[0].get("parentId")  # a first entry whose parent is later: not a root
        return not (isinstance(parent, str) and parent in self._index)

    def types(self) -> list[Any]:
        """Each entry's ``type`` in append order: the session's own list, kept as entries are
        appended (read it, never change it)."""
        return self._types

    def count_of(self, kind: str) -> int:
        """How many entries have ``type`` ``kind`` (kept as entries are appended: O(1))."""
        return self._type_counts[kind]

    def odd_message_positions(self) -> list[int]:
        """Positions of the ``message`` entries whose ``message`` is not an object (read only)."""
        return self._odd_messages

    def set_leaf(self, entry_id: str | None) -> None:
        """Move the in-memory leaf (None = before the first entry). Not persisted (§2.3)."""
        if entry_id is not None and entry_id not in self._index:
            raise EntryNotFound(f"Entry {entry_id} not found")
        self.leaf_id = entry_id

    def branch(self, leaf_id: str | None = None) -> list[dict[str, Any]]:
        """Entries on the path root → leaf (the current leaf by default)."""
        start = self.leaf_id if leaf_id is None else leaf_id
        index, entries, starts = self._index, self.entries, self._starts
        position = index.get(start) if start else None
        # Walks runs, not entries: in a run every entry is the child of the one before it, so the
        # path through it is a slice (a session never navigated back is one run: one slice). A
        # parent appended before its child (every entry this host writes) has a smaller position,
        # and a strictly falling walk cannot cycle; from the first parent that is not (an imported
        # file), a seen set catches a cycle.
        runs: list[tuple[int, int]] = []  # (first, last) positions, leaf first
        rest: list[int] = []  # the checked walk's positions, leaf first
        while position is not None:
            first = starts[bisect_right(starts, position) - 1]
            runs.append((first, position))
            parent = entries[first].get("parentId")
            following = index.get(parent) if isinstance(parent, str) else None
            if following is not None and following >= first:
                seen = {i for a, b in runs for i in range(a, b + 1)}
                position = following
                while position is not None and position not in seen:
                    rest.append(position)
                    seen.add(position)
                    parent = entries[position].get("parentId")
                    position = index.get(parent) if isinstance(parent, str) else None
                break
            position = following
        path = [entries[i] for i in reversed(rest)]
        if not path and len(runs) == 1:
            return entries[runs[0][0] : runs[0][1] + 1]
        for first, last in reversed(runs):
            path += entries[first : last + 1]
        return path

    def entries_since(self, entry_id: str) -> list[dict[str, Any]]:
        """Entries appended strictly after ``entry_id`` (O(k)); unknown id → EntryNotFound."""
        index = self._index.get(entry_id)
        if index is None:
            raise EntryNotFound(f"Entry not found: {entry_id}")
        return self.entries[index + 1 :]

    def labels(self) -> dict[str, str]:
        return {target: label for target, (label, _) in self._labels.items()}

    def labels_with_timestamps(self) -> dict[str, tuple[str, str]]:
        """A copy of the labels: entry id → (label, the label entry's timestamp)."""
        return dict(self._labels)

    def tree(self) -> list[dict[str, Any]]:
        """Nodes ``{entry, children, label?, labelTimestamp?}``; roots: null/self parent and orphans."""
        with gc_paused():  # one node dict and list per entry, no cycles: collections would only rescan
            return build_tree(self.entries, self._labels)

    def view(self, factory: Callable[[], V], upto: list[dict[str, Any]] | None = None) -> V:
        """The view ``factory`` makes, caught up with every entry (or with ``upto``: a copy of
        ``entries`` taken earlier, for a thread; a view already past it is left as it is).

        Each view lives as long as the session and is fed only the entries it has not seen, so
        a read command costs what was appended since the last one, not the session's length.
        Entries never change once appended; the one way an entry goes (a failed write
        unpublishing it) drops every view."""
        slot = self._views.get(factory)
        if slot is None:
            slot = self._views.setdefault(factory, _Slot(factory()))
        entries = self.entries if upto is None else upto
        with slot.lock:
            view, count, total = slot.view, slot.count, len(entries)
            while count < total:
                view.add(entries[count])
                count += 1
                slot.count = count
        return view

    def view_lag(self, factory: Callable[[], V]) -> int:
        """How many entries the view ``factory`` made has yet to take (all of them when there is
        none yet): what the next :meth:`view` call will do."""
        slot = self._views.get(factory)
        return len(self.entries) - (slot.count if slot is not None else 0)

    def current_view(self, factory: Callable[[], V]) -> V | None:
        """The view ``factory`` made, when it exists and has taken every entry; else None (and
        nothing is fed to it)."""
        slot = self._views.get(factory)
        return slot.view if slot is not None and slot.count == len(self.entries) else None

    @property
    def name(self) -> str | None:
        """The latest ``session_info`` name; None when never named or cleared."""
        entry = self._info_entry
        if entry is None:
            return None
        name = entry.get("name")
        return (name.strip() or None) if isinstance(name, str) else None

    def summary(self) -> dict[str, Any] | None:
        """The non-retired ``session_summary`` entry (a later ``branch_summary`` retires it, §2.6)."""
        return latest_session_summary(self.entries)

    def fork_messages(self) -> list[dict[str, str]]:
        """Every user message entry in the whole session with its joined text (get_fork_messages)."""
        return [dict(item) for item in self.view(ForkMessages).items]  # copies: the view keeps its own

    def entry_text(self, entry_id: str) -> str:
        entry = self.get_entry(entry_id)
        return message_text(entry.get("message")) if entry else ""

    def messages(self) -> Iterator[dict[str, Any]]:
        for entry in self.entries:
            if entry.get("type") == "message" and isinstance(entry.get("message"), dict):
                yield entry["message"]

    def stats(self) -> dict[str, Any]:
        """Counts and summed assistant usage over every message in the session."""
        counts = {
            "userMessages": 0,
            "assistantMessages": 0,
            "toolCalls": 0,
            "toolResults": 0,
            "totalMessages": 0,
        }
        tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
        cost = 0.0
        latest_usage = None
        for message in self.messages():
            counts["totalMessages"] += 1
            role = message.get("role")
            if role == "user":
                counts["userMessages"] += 1
            elif role == "toolResult":
                counts["toolResults"] += 1
            elif role == "assistant":
                counts["assistantMessages"] += 1
                content = message.get("content")
                if isinstance(content, list):
                    counts["toolCalls"] += sum(
                        1 for b in content if isinstance(b, dict) and b.get("type") == "toolCall"
                    )
                usage = message.get("usage")
                if isinstance(usage, dict):
                    latest_usage = usage
                    for key in ("input", "output", "cacheRead", "cacheWrite"):
                        value = usage.get(key)
                        if isinstance(value, int | float):
                            tokens[key] += int(value)
                    usage_cost = usage.get("cost")
                    if isinstance(usage_cost, dict) and isinstance(usage_cost.get("total"), int | float):
                        cost += usage_cost["total"]
        tokens["total"] = tokens["input"] + tokens["output"] + tokens["cacheRead"] + tokens["cacheWrite"]
        result: dict[str, Any] = {**counts, "tokens": tokens, "cost": cost}
        if latest_usage is not None:
            result["latestAssistantUsage"] = latest_usage
        return result


class ForkMessages:
    """The view behind :meth:`Session.fork_messages`: ``{entryId, text}`` of each user message
    with text, in append order."""

    def __init__(self) -> None:
        self.items: list[dict[str, str]] = []

    def add(self, entry: dict[str, Any]) -> None:
        if _role(entry) == "user":
            text = message_text(entry["message"])
            if text:
                self.items.append({"entryId": entry["id"], "text": text})


def _store_write(write: Callable[..., None], *args: Any) -> None:
    """Call a writer; a store's own error (a database driver's, which is no ``OSError``) is raised
    as :class:`SessionWriteFailed`, so every store's failed write reaches the client the same way
    (``Could not save the session: …``), whatever the store."""
    try:
        write(*args)
    except OSError:
        raise
    except Exception as exc:
        raise SessionWriteFailed(str(exc) or type(exc).__name__) from exc


def is_internal_header(header: dict[str, Any]) -> bool:
    """Workflow stage sessions: hidden only when ``internal`` is exactly true and all three strings set."""
    if header.get("internal") is not True:
        return False
    workflow = header.get("workflow")
    if not isinstance(workflow, dict):
        return False
    return all(isinstance(workflow.get(k), str) and workflow.get(k) for k in ("runId", "stageId", "stageName"))


def latest_session_summary(entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    for entry in reversed(entries):
        kind = entry.get("type")
        if kind == "branch_summary":
            return None
        if kind == "session_summary":
            return entry
    return None


def build_tree(entries: list[dict[str, Any]], labels: dict[str, tuple[str, str]]) -> list[dict[str, Any]]:
    """The tree of ``entries`` (append order): children sorted by timestamp, labels attached."""
    nodes: dict[str, dict[str, Any]] = {}
    ordered: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for entry in entries:
        node: dict[str, Any] = {"entry": entry, "children": []}
        label = labels.get(entry.get("id", ""))
        if label:
            node["label"], node["labelTimestamp"] = label
        if isinstance(entry.get("id"), str):
            nodes[entry["id"]] = node
        ordered.append((entry, node))
    roots: list[dict[str, Any]] = []
    for entry, node in ordered:
        parent_id = entry.get("parentId")
        parent = nodes.get(parent_id) if isinstance(parent_id, str) and parent_id != entry.get("id") else None
        (parent["children"] if parent is not None else roots).append(node)
    stack = list(roots)
    while stack:  # iterative: deep sessions must not hit the recursion limit
        node = stack.pop()
        children = node["children"]
        if len(children) > 1:
            children.sort(key=lambda n: ms_from_iso(n["entry"].get("timestamp")) or 0.0)
        stack.extend(children)
    return roots
