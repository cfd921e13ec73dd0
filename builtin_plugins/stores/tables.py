"""What the database stores (``sqlite``, ``postgres``) share: the listing row kept on every append,
entry decoding, the listing cache, and create/put on top of a store's writer and loader (import is
``BaseStore``'s, the same for every store).

A session is a ``sessions`` row (the header, the listing fields, ``next_seq``) plus one entries row
per entry, numbered from 0; the store's writer keeps the row's listing fields current on every
append, so a listing never reads entries.
"""

from __future__ import annotations

import json
from typing import Any

from atomic_host.kit.collector import gc_paused
from atomic_host.kit.sessions.ids import validate_session_id
from atomic_host.kit.sessions.jsonl import loads_array
from atomic_host.kit.sessions.listing import ListingState, build_info, finish_listing
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


def listing_row(header: dict[str, Any], state: ListingState, next_seq: int) -> dict[str, Any]:
    """A ``sessions`` row as named parameters (booleans as Python bools)."""
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
    }


LISTING_COLUMNS = "id, header, modified_ms, name, has_name, message_count, first_message, summary"
"""The columns :class:`ListingCache` reads, in its order."""


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


class ListingCache:
    """RpcSessionInfo dicts from :data:`LISTING_COLUMNS` rows. An info is a function of its row: a
    row equal to the last listing's is answered with the info built then (10,000 sessions: parsing
    headers and formatting dates was most of list_sessions). Rows are read every time, so another
    process's writes show at once."""

    def __init__(self) -> None:
        self._listed: dict[str, tuple[Any, dict[str, Any]]] = {}
        """Session id → (its row, its info) as the last listing read them."""

    def infos(self, rows: list[Any], prefix: str) -> list[dict[str, Any]]:
        """The sorted listing of ``rows``; each info's path is ``prefix + id``."""
        known, listed = self._listed, {}
        fresh = [r for r in rows if (k := known.get(r[0])) is None or k[0] != r]
        if fresh:
            with gc_paused():  # a dict per session (10,000 sessions: ~15% of a first listing)
                built = _build_infos(fresh, prefix)
            known = {**known, **{r[0]: (r, info) for r, info in zip(fresh, built, strict=True)}}
        infos = []
        for r in rows:
            item = listed[r[0]] = known[r[0]]
            infos.append(dict(item[1]))  # copies: callers may change what they get
        self._listed = listed
        return finish_listing(infos)


def _build_infos(rows: list[Any], prefix: str) -> list[dict[str, Any]]:
    headers = loads_rows([r[1] for r in rows])  # one array parse for every header
    return [
        build_info(
            header,
            prefix + r[0],
            message_count=r[5],
            first_message=r[6],
            modified_ms=r[2],
            name=r[3],
            has_name=bool(r[4]),
            summary=json.loads(r[7]) if r[7] else None,
        )
        for r, header in zip(rows, headers, strict=True)
    ]


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
    "LISTING_COLUMNS",
    "ListingCache",
    "TableStore",
    "TableWriter",
    "dumps",
    "last_release",
    "listing_row",
    "loads_entries",
    "loads_rows",
    "state_of",
]
