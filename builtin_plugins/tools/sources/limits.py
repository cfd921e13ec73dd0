"""Byte and time bounds shared by the sources (standard library only).

A :class:`Budget` is one read's allowance: a deadline, a cap on the bytes it may produce, and a
cancellation check (the tool context's, which raises when the call is aborted). Readers call
:meth:`Budget.tick` between chunks, so a hostile file (a zip bomb, a member of 2 GB, a gzip
stream that never ends) stops at the first bound it crosses, with a :class:`LimitExceeded`
that says which.
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from typing import IO, Any

MiB = 1024 * 1024
MAX_MEMBER_BYTES = 64 * MiB
"""The most an archive member (or a ``.gz`` stream) may decompress to before a read gives up."""
DEFAULT_SECONDS = 30.0
"""How long one read may take (setting ``read.timeoutSeconds``)."""
CHUNK = 1 << 16
"""Compressed input is read (and the budget checked) this much at a time."""
OUT_CHUNK = 1 << 20
"""Decompressed output is taken this much at a time."""


def read_settings(settings: object) -> dict[str, Any]:
    """The ``read`` object of the settings (``{}`` when absent or not an object)."""
    value = settings.get("read") if isinstance(settings, dict) else None
    return value if isinstance(value, dict) else {}


def time_budget(settings: object) -> float:
    """``read.timeoutSeconds`` when it is a positive number, else :data:`DEFAULT_SECONDS`."""
    seconds = read_settings(settings).get("timeoutSeconds", DEFAULT_SECONDS)
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds <= 0:
        return DEFAULT_SECONDS
    return float(seconds)


class SourceError(Exception):
    """A source that cannot be read as asked; the message is for the model."""


class LimitExceeded(SourceError):
    """A byte or time bound was crossed."""


def human_size(n: float) -> str:
    """``512 B``, ``3.2 KiB``, ``64 MiB``, ``2.0 GiB``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" or n == int(n) else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"  # pragma: no cover - the loop returns


class Budget:
    """A deadline plus a cancellation check; ``what`` names the source in messages."""

    def __init__(self, what: str, seconds: float = DEFAULT_SECONDS, check: Callable[[], None] | None = None) -> None:
        self.what = what
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.check = check

    def tick(self) -> None:
        """Raise when the call was aborted (the check's exception) or the time is up."""
        if self.check is not None:
            self.check()
        if time.monotonic() > self.deadline:
            raise LimitExceeded(f"Reading {self.what} took longer than {self.seconds:g} s; stopped")

    def read_capped(self, f: IO[bytes], cap: int = MAX_MEMBER_BYTES, label: str | None = None) -> bytes:
        """All of ``f`` in chunks, ticking between them; over ``cap`` bytes raises."""
        chunks: list[bytes] = []
        size = 0
        while True:
            self.tick()
            chunk = f.read(OUT_CHUNK)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
            if size > cap:
                raise LimitExceeded(
                    f"{label or self.what} decompresses to more than {human_size(cap)}, over the read limit. "
                    "Extract it with bash (e.g. unzip -p / tar -xOf … | head) to see part of it."
                )


class _Ticking(io.RawIOBase):
    """A seekable file whose every read first calls ``tick`` (compressed input of a tarball)."""

    def __init__(self, raw: IO[bytes], tick: Callable[[], None]) -> None:
        self._raw = raw
        self._tick = tick

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        self._tick()
        return self._raw.readinto(buffer)  # type: ignore[attr-defined]

    def seek(self, pos: int, whence: int = 0) -> int:
        return self._raw.seek(pos, whence)

    def tell(self) -> int:
        return self._raw.tell()

    def close(self) -> None:
        self._raw.close()
        super().close()


def ticking_file(path: str, budget: Budget) -> IO[bytes]:
    """``path`` opened for reading, checking ``budget`` every 64 KiB read from disk."""
    return io.BufferedReader(_Ticking(open(path, "rb"), budget.tick), CHUNK)
