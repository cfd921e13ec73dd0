"""Ids and timestamps in the exact shapes the session format uses."""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Container
from typing import Any

from atomic_host.kit._fast.lazy import module
from atomic_host.kit.messages import ms_from_iso

# ms_from_iso: parsed in the kit, where entries become messages; offered here to the stores
__all__ = ["filename_timestamp", "ms_from_iso", "new_entry_id", "now_iso", "uuid4", "uuid7", "validate_session_id"]

SESSION_ID_PATTERN = r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$"
"""§2.1's session id; compiled (and kept by ``re``) at the first check, not at every start."""


def validate_session_id(session_id: object) -> str:
    """Return ``session_id`` if it is a safe id (§2.1 regex, no path parts), else raise ValueError."""
    if not isinstance(session_id, str) or not re.match(SESSION_ID_PATTERN, session_id) or ".." in session_id:
        raise ValueError(f"Invalid session id: {session_id!r}")
    return session_id


def uuid7() -> str:
    """A UUIDv7 string (time-ordered), as Atomic uses for session ids."""
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= ((rand >> 62) & 0xFFF) << 64
    value |= 0b10 << 62
    value |= rand & ((1 << 62) - 1)
    return _dashed(f"{value:032x}")


def uuid4() -> str:
    """A random UUIDv4 string (request ids of the extension UI sub-protocol)."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return _dashed(raw.hex())


def _dashed(h: str) -> str:
    # Formatting by hand: importing ``uuid`` pulls in ``platform`` (~4 ms of host startup).
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def new_entry_id(existing: Container[str]) -> str:
    """8 lowercase hex chars (the head of a random UUID), re-drawn on collision."""
    while True:
        candidate = os.urandom(4).hex()
        if candidate not in existing:
            return candidate


def iso_from_ms(ms: float) -> str:
    """``2026-07-13T10:00:00.000Z`` from Unix milliseconds (JavaScript ``toISOString``).

    The same text as ``datetime.fromtimestamp(ms / 1000, UTC)`` formatted, computed by hand for
    times from 1970 to 9999 (``list_sessions`` formats two per session: 10,000 sessions spent
    100 ms in ``strftime``): the seconds' fraction is rounded to microseconds half-to-even as
    ``fromtimestamp`` rounds it, and each day's date is formatted once."""
    seconds = ms / 1000
    if not 0 <= seconds < _YEAR_10000:  # NaN, negative, far future: the library's answer (or error)
        return _iso_by_datetime(seconds)
    fraction, whole = math.modf(seconds)
    micro = round(fraction * 1e6)
    second = int(whole)
    if micro >= 1_000_000:
        micro -= 1_000_000
        second += 1
    day, rest = divmod(second, 86400)
    date = _DATES.get(day)
    if date is None:
        if len(_DATES) >= 4096:
            _DATES.clear()
        date = _DATES[day] = time.strftime("%Y-%m-%d", time.gmtime(day * 86400))
    hour, rest = divmod(rest, 3600)
    minute, sec = divmod(rest, 60)
    return f"{date}T{hour:02d}:{minute:02d}:{sec:02d}.{micro // 1000:03d}Z"


_YEAR_10000 = 253_402_300_800
_DATES: dict[int, str] = {}
"""Day number since the epoch → ``YYYY-MM-DD``."""


def _datetime(seconds: float) -> Any:
    """``datetime.fromtimestamp(seconds, UTC)``; datetime is imported on first use (off the startup path)."""
    datetime = module("datetime")
    return datetime.datetime.fromtimestamp(seconds, tz=datetime.UTC)


def _iso_by_datetime(seconds: float) -> str:
    dt = _datetime(seconds)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def now_iso() -> str:
    """The current time as the format's ISO timestamp (UTC, milliseconds, ``Z``)."""
    return iso_from_ms(time.time() * 1000)


def filename_timestamp(iso: str) -> str:
    """The file-name form of an ISO timestamp: ``:`` and ``.`` become ``-``."""
    return iso.replace(":", "-").replace(".", "-")
