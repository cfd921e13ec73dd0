"""RpcSessionInfo fields (§2.6), computed incrementally so stores can maintain them on append."""

from __future__ import annotations

import re
from typing import Any

from atomic_host.contract.records import field, record
from atomic_host.kit.messages import message_text
from atomic_host.kit.sessions.ids import iso_from_ms, ms_from_iso

__all__ = ["ListingState", "build_info", "finish_listing"]


@record  # not @dataclass: no per-class code to compile at every start
class ListingState:
    """Running listing fields of one session; ``apply`` each entry in append order."""

    message_count: int = 0
    first_message: str | None = None
    modified_ms: float | None = None
    name: str | None = None
    has_name: bool = False
    summary: dict[str, Any] | None = field(default=None)

    def apply(self, entry: dict[str, Any]) -> None:
        kind = entry.get("type")
        if kind == "session_info":
            name = entry.get("name")
            self.name = (name.strip() or None) if isinstance(name, str) else None
            self.has_name = True
        elif kind == "session_summary":
            self.summary = entry
        elif kind == "branch_summary":
            self.summary = None  # a later branch summary retires the session summary
        elif kind == "message":
            self.message_count += 1
            message = entry.get("message")
            if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
                return
            stamp = message.get("timestamp")
            ms = float(stamp) if isinstance(stamp, int | float) else ms_from_iso(entry.get("timestamp"))
            if ms is not None and ms > 0:
                self.modified_ms = ms if self.modified_ms is None else max(self.modified_ms, ms)
            if self.first_message is None and message.get("role") == "user":
                text = message_text(message, " ")
                if text:
                    self.first_message = text

    def info(
        self, header: dict[str, Any], path: str, fallback_mtime_ms: float | None = None
    ) -> dict[str, Any]:
        return build_info(
            header,
            path,
            message_count=self.message_count,
            first_message=self.first_message,
            modified_ms=self.modified_ms,
            name=self.name,
            has_name=self.has_name,
            summary=self.summary,
            fallback_mtime_ms=fallback_mtime_ms,
        )


_CANONICAL_ISO = r"(19[7-9][0-9]|[2-9][0-9]{3})-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z"
"""``YYYY-MM-DDTHH:MM:SS.mmmZ`` from 1970 on (before it, the formatting by ``datetime`` differs).
A pattern, not a compiled one: compiled on the first listing by ``re``'s cache, not at start."""


def build_info(
    header: dict[str, Any],
    path: str,
    *,
    message_count: int,
    first_message: str | None,
    modified_ms: float | None,
    name: str | None,
    has_name: bool,
    summary: dict[str, Any] | None,
    fallback_mtime_ms: float | None = None,
) -> dict[str, Any]:
    """One RpcSessionInfo dict; ``created``/``modified`` are ISO strings."""
    timestamp = header.get("timestamp")
    # A header stamped the way this host (and JavaScript's toISOString) writes it is its own
    # ``created``: parsed and formatted back it gives the same text, and text of that shape that
    # does not parse is shown as is either way. Parsing is then left for a missing ``modified``
    # (10,000 sessions: two thirds of a first SQLite listing's build).
    canonical = isinstance(timestamp, str) and re.fullmatch(_CANONICAL_ISO, timestamp) is not None
    if modified_ms is not None and not _MIN_MS < modified_ms < _MAX_MS:  # a hand-edited stamp no date can show
        modified_ms = None
    created_ms = ms_from_iso(timestamp) if not canonical or modified_ms is None else None
    if modified_ms is None:
        modified_ms = created_ms if created_ms is not None else fallback_mtime_ms
    info: dict[str, Any] = {"path": path, "id": header.get("id"), "cwd": header.get("cwd") or ""}
    if name:
        info["name"] = name
    info["hasName"] = has_name
    if isinstance(header.get("parentSession"), str):
        info["parentSessionPath"] = header["parentSession"]
    if canonical or created_ms is None:
        info["created"] = timestamp
    else:
        info["created"] = iso_from_ms(created_ms)
    info["modified"] = iso_from_ms(modified_ms) if modified_ms is not None else info["created"]
    info["messageCount"] = message_count
    info["firstMessage"] = first_message or "(no messages)"
    if summary is not None and isinstance(summary.get("summary"), str):
        info["summary"] = summary["summary"]
        if summary.get("summarizedThroughId") is not None:
            info["summarizedThroughId"] = summary["summarizedThroughId"]
    info["_modifiedMs"] = modified_ms or 0.0
    return info


_MIN_MS, _MAX_MS = -62_135_596_800_000, 253_402_300_800_000
"""Unix ms of the years 1 and 10000: the times an ISO date shows (a message timestamp outside, or
NaN, is junk)."""


def finish_listing(infos: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Sort by modified descending and drop the private sort key."""
    infos.sort(key=lambda i: i["_modifiedMs"], reverse=True)
    for info in infos:
        info.pop("_modifiedMs", None)
    return infos
