"""Atomic's JSONL session format (§2.1, §2.2): one JSON record per line, a ``session`` header first.

The codec every store and the host share: :func:`encode_line` writes a record as the reference
writer does, :func:`parse_records` / :func:`load_jsonl` read a file back (a torn or junk line is
skipped, never fatal) and migrate v1/v2 records to v3.
"""

from __future__ import annotations

import io
import json
import os
import stat
from itertools import repeat
from pathlib import Path
from typing import Any

from atomic_host.kit import _fast
from atomic_host.kit.collector import gc_paused
from atomic_host.kit.sessions.errors import InvalidSessionFile
from atomic_host.kit.sessions.ids import new_entry_id

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def encode_line(record: dict[str, Any]) -> bytes:
    """One JSON line as ``JSON.stringify`` writes it (compact, UTF-8) plus ``\\n``."""
    try:
        return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: escape them rather than write invalid UTF-8
        return (json.dumps(record, separators=(",", ":")) + "\n").encode("ascii")


def parse_line(line: bytes) -> Any:
    """The JSON value of one line, or None when it does not parse (a torn or junk line)."""
    try:
        return json.loads(line)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than the decoder goes
        return None


def read_bytes_nofollow(path: Path) -> bytes:
    """Read a regular file, refusing symlinks (O_NOFOLLOW)."""
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InvalidSessionFile(f"Not a regular file: {path}")
        # one read of the size fstat gives (+1 to see EOF): one buffer, not chunks joined into a
        # second one (a long session is megabytes; every buffer is a copy and fresh pages)
        chunks = [os.read(fd, info.st_size + 1)]
        while chunks[-1]:
            chunks.append(os.read(fd, 1 << 20))
        return chunks[0] if len(chunks) == 2 else b"".join(chunks)
    finally:
        os.close(fd)


def migrate(records: list[dict[str, Any]]) -> bool:
    """Migrate v1/v2 records in place to v3; True when anything changed (§2.2)."""
    header = records[0]
    version = header.get("version", 1)
    if not isinstance(version, int):
        version = 1
    if version >= 3:
        return False
    if version < 2:
        ids: set[str] = set()
        previous: str | None = None
        for record in records[1:]:
            record["id"] = new_entry_id(ids)
            ids.add(record["id"])
            record["parentId"] = previous
            previous = record["id"]
            if record.get("type") == "compaction" and "firstKeptEntryIndex" in record:
                index = record.pop("firstKeptEntryIndex")
                target = records[index] if isinstance(index, int) and 0 < index < len(records) else None
                record["firstKeptEntryId"] = target.get("id") if target else None
    for record in records[1:]:
        message = record.get("message")
        if (
            record.get("type") == "message"
            and isinstance(message, dict)
            and message.get("role") == "hookMessage"
        ):
            message["role"] = "custom"
    header["version"] = 3
    return True


def parse_records(data: bytes, skipped: list[str] | None = None) -> list[dict[str, Any]]:
    """Every JSON-object line of ``data``; unparseable lines are skipped (and, with ``skipped``,
    named there: ``line <n>``).

    Each line is parsed on its own by jiter, whose string cache gives the keys and short values
    that repeat on every line one shared ``str`` each, and by :func:`parse_line` when jiter refuses
    it (``json.loads`` takes what jiter does not: lone surrogate escapes, a BOM, UTF-16), with the
    cyclic GC paused, since parsing only builds acyclic objects.

    Not one parse of all the lines joined into a JSON array, as before: that was no faster
    (docs/performance.md, the jiter row), and its check of one item per line could be fooled. A line
    holding two values and a value spread over two lines give as many items as lines, and records
    that no line holds."""
    # split after each b"\n" (BytesIO finds them with memchr and shares ``data``)
    lines = io.BytesIO(data).readlines()
    if _fast.PLAIN:
        from_json = _json_line
    else:
        from jiter import from_json  # imported on the first read only

    records: list[dict[str, Any]] = []
    keep = records.append
    # promoted: a session's ten containers per entry, left young, would be walked by the next
    # young collections right after a switch (at 20,000 turns most of a first read)
    with gc_paused(then="promote"):
        for number, line in enumerate(lines, 1):
            try:
                obj = from_json(line, cache_mode="all")
            except ValueError:
                obj = parse_line(line[:-1] if line.endswith(b"\n") else line) if line.strip() else None
                if obj is None and skipped is not None and line.strip():
                    skipped.append(f"line {number}")
            if isinstance(obj, dict):
                keep(obj)
            elif obj is not None and skipped is not None:
                skipped.append(f"line {number}")
    return records


def _json_line(line: bytes, cache_mode: str = "all") -> Any:
    """``json.loads`` in the place of jiter's ``from_json`` (``ATOMIC_PLAIN=1``): a line it
    cannot read raises ValueError."""
    try:
        return json.loads(line)
    except RecursionError as exc:
        raise ValueError(str(exc)) from None


def loads_array(data: bytes) -> Any:
    """Parse one (big) JSON document (jiter, or ``json.loads`` under ``ATOMIC_PLAIN=1``)."""
    if _fast.PLAIN:
        return json.loads(data)
    import jiter  # faster than json for big documents; imported on first load only
    # "all": keys and short values (types, roles, ids' neighbours) repeat on every line; jiter's
    # string cache gives one shared str each instead of a new one per entry: a 2,000-turn session
    # parses in less than half the CPU time of "none" (and in less memory)
    return jiter.from_json(data, cache_mode="all")


def load_jsonl(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], bool]:
    """(header, entries, migrated). Unparseable lines are skipped; a bad header raises."""
    records = parse_records(read_bytes_nofollow(path))
    if not records or records[0].get("type") != "session" or not isinstance(records[0].get("id"), str):
        raise InvalidSessionFile(f"Not a session file: {path}")
    migrated = migrate(records)
    return records[0], keyed_entries(records), migrated


def keyed_entries(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries of a session's records: every record after the header that has a string id."""
    entries = records[1:]
    if set(map(type, map(dict.get, entries, repeat("id")))) <= {str}:  # every one (C loops, no filter)
        return entries
    return [r for r in entries if isinstance(r.get("id"), str)]


__all__ = [
    "encode_line",
    "keyed_entries",
    "load_jsonl",
    "loads_array",
    "migrate",
    "parse_line",
    "parse_records",
    "read_bytes_nofollow",
]
