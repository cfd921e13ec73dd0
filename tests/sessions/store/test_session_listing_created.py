"""``created`` of a session listing: the header's timestamp parsed and formatted back, where text
already in that form is its own ``created`` (``build_info`` skips the round trip, which far in the
future also loses a millisecond to float precision: ``7000-01-01T00:00:00.011Z`` came back
``….010Z``)."""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from atomic_host.kit.messages import ms_from_iso
from atomic_host.kit.sessions.ids import iso_from_ms
from atomic_host.kit.sessions.listing import build_info

CANONICAL = r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z"


def reference_created(timestamp: object) -> object:
    """What ``created`` was before the shortcut: parse, then format; unparsable text as is."""
    ms = ms_from_iso(timestamp)
    return iso_from_ms(ms) if ms is not None else timestamp


def _digits(n: int) -> st.SearchStrategy[str]:
    return st.text(st.sampled_from("0123456789"), min_size=n, max_size=n)


canonical_shaped = st.builds(
    lambda y, mo, d, h, mi, s, ms: f"{y}-{mo}-{d}T{h}:{mi}:{s}.{ms}Z",
    _digits(4), _digits(2), _digits(2), _digits(2), _digits(2), _digits(2), _digits(3),
)
"""Text of the canonical shape with any digits: valid dates, and month 13, hour 24, second 60, …"""

timestamps = st.one_of(
    canonical_shaped,
    st.datetimes().map(lambda dt: dt.isoformat()),
    st.text(max_size=30),
    st.none(),
    st.integers(),
)


@given(timestamps, st.one_of(st.none(), st.floats(0, 253_402_300_799_000)))
@example("2026-07-13T10:00:00.000Z", None)
@example("7000-01-01T00:00:00.011Z", None)
@example("1969-12-31T23:59:59.999Z", None)
@example("0999-01-01T00:00:00.000Z", 5.0)
@example("2026-02-30T10:00:00.000Z", None)
@example("2026-01-01T24:00:00.000Z", None)
@example("٢٠٢٦-01-01T00:00:00.000Z", None)
def test_created_is_the_round_trip_of_the_header_timestamp(timestamp: object, modified_ms: float | None) -> None:
    info = build_info(
        {"id": "s", "timestamp": timestamp, "cwd": "/w"},
        "/p",
        message_count=0,
        first_message=None,
        modified_ms=modified_ms,
        name=None,
        has_name=False,
        summary=None,
        fallback_mtime_ms=7.0,
    )
    if isinstance(timestamp, str) and re.fullmatch(CANONICAL, timestamp) and timestamp[:4] >= "1970":
        assert info["created"] == timestamp
        if timestamp[:4] < "2100":  # where the round trip is exact (it is not by 2243), it agrees
            assert reference_created(timestamp) == timestamp
    else:
        assert info["created"] == reference_created(timestamp)
    created_ms = ms_from_iso(timestamp)
    expected_modified = modified_ms if modified_ms is not None else (created_ms if created_ms is not None else 7.0)
    assert info["modified"] == iso_from_ms(expected_modified)
