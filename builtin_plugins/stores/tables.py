"""What the database stores (``sqlite``, ``postgres``) share: the listing row kept on every append,
entry decoding, the listing, and create/put on top of a store's writer and loader (import is
``BaseStore``'s, the same for every store).

A session is a ``sessions`` row (the header, the listing state, ``next_seq``, and its listing
record ready made: ``info``, ``sort_ms``) plus one entries row per entry, numbered from 0; the
store's writer keeps the row current on every append, so a listing never reads entries and does no
per-session work but parsing its record, once (:class:`ListingCache`).
"""

from __future__ import annotations

import json
import operator
from collections import deque
from itertools import compress, repeat
from operator import itemgetter
from typing import Any

from atomic_host.kit.collector import gc_paused
from atomic_host.kit.sessions.ids import validate_session_id
from atomic_host.kit.sessions.jsonl import loads_array
from atomic_host.kit.sessions.listing import ListingState
from atomic_host.kit.sessions.repair import report_unreadable
from atomic_host.kit.sessions.store import BaseStore, has_assistant
from atomic_host.kit.sessions.tree import Session, is_internal_header


def dumps(value: Any) -> str:
    """Compact JSON text; lone surrogates (which no database text type holds) are escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":"))
    return text


def loads_rows(texts: list[str]) -> list[Any]:
    """Decode entry rows in one array parse (see ``jsonl.parse_records``); per row on any doubt."""
    if texts:
        try:
            with gc_paused(then="promote"):  # acyclic objects, left old: see kit.collector
                items = loads_array(("[" + ",".join(texts) + "]").encode())
        except (ValueError, RecursionError, UnicodeEncodeError):
            items = None
        if isinstance(items, list) and len(items) == len(texts):
            return items
    return [_loads_row(text) for text in texts]


def _loads_row(text: str) -> Any:
    """One row's value; None for a row that is not JSON (a hand edit)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def loads_entries(texts: list[str], location: str) -> list[dict[str, Any]]:
    """A session's entries from its rows: rows that are not entries (not JSON, not an object,
    no string id: a hand edit) are skipped and said once on stderr, as a JSONL file's torn lines."""
    entries = loads_rows(texts)
    if not all(map(_is_entry, entries)):
        report_unreadable(location, [f"row {i}" for i, e in enumerate(entries) if not _is_entry(e)])
        entries = [e for e in entries if _is_entry(e)]
    return entries


def _is_entry(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("id"), str)


def listing_info(header: dict[str, Any], state: ListingState) -> tuple[str, float]:
    """The ``info`` and ``sort_ms`` columns of a session: its RpcSessionInfo as JSON text, with an
    empty ``path`` (the listing sets it: it names the store as this process shows it), and the
    time it is listed by. Kept on every append, so a listing is one query and one JSON parse."""
    info = state.info(header, "")
    sort_ms = info.pop("_modifiedMs")
    return dumps(info), sort_ms


def listing_row(header: dict[str, Any], state: ListingState, next_seq: int) -> dict[str, Any]:
    """A ``sessions`` row as named parameters (booleans as Python bools)."""
    info, sort_ms = listing_info(header, state)
    return {
        "id": header["id"],
        "cwd": str(header.get("cwd", "")),
        "header": dumps(header),
        "created": header.get("timestamp"),
        "modified_ms": state.modified_ms,
        "name": state.name,
        "has_name": state.has_name,
        "message_count": state.message_count,
        "first_message": state.first_message,
        "summary": dumps(state.summary) if state.summary is not None else None,
        "internal": is_internal_header(header),
        "next_seq": next_seq,
        "info": info,
        "sort_ms": sort_ms,
    }


STATE_COLUMNS = "header, modified_ms, name, has_name, message_count, first_message, summary"
"""A session's header and listing state, as :func:`state_row` reads them."""

LISTING = "SELECT id, info FROM {table} WHERE {internal} {where} ORDER BY sort_ms DESC, id DESC"
"""The listing query (the table, its test for internal sessions and an extra condition filled in):
the rows in listing order."""


def state_of(
    modified_ms: Any, name: Any, has_name: Any, message_count: Any, first_message: Any, summary: Any
) -> ListingState:
    """The :class:`ListingState` a ``sessions`` row holds (``summary`` as stored: JSON text or None)."""
    return ListingState(
        message_count=message_count,
        first_message=first_message,
        modified_ms=modified_ms,
        name=name,
        has_name=bool(has_name),
        summary=json.loads(summary) if summary else None,
    )


def state_row(row: Any) -> tuple[dict[str, Any], ListingState]:
    """The header and listing state of a :data:`STATE_COLUMNS` row."""
    return json.loads(row[0]), state_of(*row[1:7])


class ListingCache:
    """The listing from :data:`LISTING` rows. A row's ``info`` is parsed once: the next listing
    finds it by its text (an appended session's row has a new one) and hands out a copy, in C
    loops (``map``); parsing every row again would cost more than the query (10,000 sessions)."""

    def __init__(self) -> None:
        self._parsed: dict[str, dict[str, Any]] = {}
        """``info`` text → its record (the path set), as the last listing read them."""

    def infos(self, rows: list[Any], prefix: str) -> tuple[list[dict[str, Any]], list[str]]:
        """The records of ``rows`` (each path ``prefix + id``), and the ids of the rows whose
        ``info`` is missing or not an object (written before the column, or edited by hand:
        :func:`refreshed` makes theirs again), left out. Every step is a C loop over the rows."""
        texts = list(map(itemgetter(1), rows))
        known = self._parsed
        found = list(map(known.get, texts))
        bad: list[str] = []
        if None in found:  # new or changed sessions (every one, on the first listing)
            fresh = list(compress(rows, map(operator.is_, found, repeat(None))))
            fresh_texts = list(map(itemgetter(1), fresh))
            if not set(map(type, fresh_texts)) <= {str}:  # NULL, bytes (SQLite stores what it is given)
                fresh_texts = [text if isinstance(text, str) else "null" for text in fresh_texts]
            with gc_paused(then="promote"):  # a dict per session, acyclic (kit.collector)
                parsed = loads_rows(fresh_texts)
            if not set(map(type, parsed)) <= {dict}:
                records = list(map(isinstance, parsed, repeat(dict)))
                bad = [row[0] for row, record in zip(fresh, records, strict=True) if not record]
                fresh, parsed = list(compress(fresh, records)), list(compress(parsed, records))
            paths = map(prefix.__add__, map(itemgetter(0), fresh))
            deque(map(dict.__setitem__, parsed, repeat("path"), paths), maxlen=0)
            known = {**known, **dict(zip(map(itemgetter(1), fresh), parsed, strict=True))}
            found = list(map(known.get, texts))
            if bad:
                texts = list(filter(known.__contains__, texts))
                found = list(filter(None, found))
        self._parsed = dict(zip(texts, found, strict=True))  # the listed ones only
        return list(map(dict.copy, found)), bad  # copies: callers may change what they get


REFRESH_COLUMNS = f"id, next_seq, {STATE_COLUMNS}"
"""What :func:`refreshed` reads."""


def refreshed(rows: list[Any]) -> list[dict[str, Any]]:
    """New ``info``/``sort_ms`` for :data:`REFRESH_COLUMNS` rows, as named parameters of an update
    that applies only while the row is unchanged (``next_seq``); a row whose header is not a JSON
    object gets none (it cannot be opened either)."""
    updates = []
    for row in rows:
        try:
            header, state = state_row(row[2:])
        except ValueError:
            continue
        if isinstance(header, dict):
            info, sort_ms = listing_info(header, state)
            updates.append({"id": row[0], "next_seq": row[1], "info": info, "sort_ms": sort_ms})
    return updates


def last_release(counts: dict[str, int], session_id: str) -> bool:
    """Count one writer of ``session_id`` off (a process may have several: switching to the
    session open here); True when it was the last one, and the lock is to be let go."""
    count = counts.get(session_id, 0) - 1
    if count > 0:
        counts[session_id] = count
        return False
    counts.pop(session_id, None)
    return True


class TableWriter:
    """What the database stores' writers share: the session's listing state and next sequence
    number, and whether this writer holds the session's write lock (``store.leases``)."""

    def __init__(self, store: Any, state: ListingState | None = None, next_seq: int = 0) -> None:
        self.store = store
        self.state = state or ListingState()
        self.next_seq = next_seq
        self.session_id = ""
        self._header: dict[str, Any] = {}
        self.leased = False

    def close(self) -> None:
        if self.leased:
            self.leased = False
            self.store.leases.release(self.session_id)


class TableStore(BaseStore):
    """create/put for a database store; subclasses give ``_writer``, ``_load``, ``has`` and
    ``location``."""

    def _writer(self) -> Any:
        """A writer for a session not in the database yet."""
        raise NotImplementedError

    def _load(self, session_id: str, cwd: str | None = None) -> Session:
        raise NotImplementedError

    def has(self, session_id: str, cwd: str | None = None) -> bool:
        raise NotImplementedError

    def location(self, session_id: str) -> str:
        raise NotImplementedError

    def _create(self, header: dict[str, Any], entries: list[dict[str, Any]]) -> Session:
        validate_session_id(header["id"])
        session = Session(header, entries, writer=self._writer(), location=self.location(header["id"]))
        if has_assistant(entries):
            session.flush()
        return session

    def put(
        self, header: dict[str, Any], entries: list[dict[str, Any]], *, overwrite: bool = False
    ) -> Session:
        validate_session_id(header["id"])
        if self.has(header["id"]) and not overwrite:
            return self._load(header["id"])
        session = Session(header, entries, writer=self._writer(), location=self.location(header["id"]))
        session.flush()
        return session


__all__ = [
    "LISTING",
    "REFRESH_COLUMNS",
    "STATE_COLUMNS",
    "ListingCache",
    "TableStore",
    "TableWriter",
    "dumps",
    "last_release",
    "listing_info",
    "listing_row",
    "loads_entries",
    "loads_rows",
    "refreshed",
    "state_of",
    "state_row",
]
