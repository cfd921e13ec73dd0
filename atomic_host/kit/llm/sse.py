"""Server-sent events from the bytes of a response, read exactly as ``httpx_sse`` reads them.

``httpx_sse`` decodes each network chunk to text (``aiter_text``), splits it into lines
(``SSELineDecoder``) and interprets one line per call (``SSEDecoder``), three generator layers and
an event object per event; for a 200-delta reply that was most of the SSE share of a run
(issue 12). :class:`SSEDecoder` works on the bytes instead: lines end at LF, CR or CRLF (the
three, and only them, as the spec and ``httpx_sse`` say), each line is decoded as UTF-8 with
replacement on its own (an ASCII line end never falls inside a multi-byte sequence, so this is
the incremental decoder's text), and the fields are interpreted as ``httpx_sse`` does — including
its quirks: a blank line dispatches whenever any field is set, the last event id is never reset,
a leading BOM is kept. ``tests/providers/test_prov_sse_decoder.py`` holds it to ``httpx_sse`` on
hostile streams cut at every place.
"""

from __future__ import annotations

MAX_LINE_BYTES = 32 * 1024 * 1024
"""Default longest line, and longest event (its data lines together), a stream may send
(``StreamOptions.max_line_bytes`` gives the bound of a provider request)."""


class LineTooLong(ValueError):
    """A stream line or event is longer than the decoder's bound (``str(exc)`` says so)."""


class SSEDecoder:
    """Feed it a stream's byte chunks in order; each call returns the ``(event, data)`` pairs the
    chunk completed (``event`` is ``"message"`` when the stream named none).

    A line, or an event's data, longer than ``max_line`` bytes raises :class:`LineTooLong` as soon
    as it is known to be: a stream that never ends its line (or a compressed one that expands to
    gigabytes) is refused, not held in memory until the kernel steps in."""

    __slots__ = ("_buffer", "_buffered", "_data", "_data_size", "_event", "_id", "_retry", "_skip_lf", "max_line")

    def __init__(self, max_line: int = MAX_LINE_BYTES) -> None:
        self.max_line = max_line
        self._buffer: list[bytes] = []
        """The start of a line whose end has not arrived, as the chunks that brought it: joined
        when its end arrives, so a line of 10 MB in 4 KB reads is one copy, not one per read."""
        self._buffered = 0
        """Bytes in ``_buffer``."""
        self._data_size = 0
        """Characters in ``_data``."""
        self._skip_lf = False
        """The last chunk ended with CR: an LF opening the next one is the rest of that line end."""
        self._event = ""
        self._data: list[str] = []
        self._id = ""
        self._retry: int | None = None

    def feed(self, chunk: bytes) -> list[tuple[str, str]]:
        if not chunk:
            return []
        if self._skip_lf:
            self._skip_lf = False
            if chunk[0] == 0x0A:
                chunk = chunk[1:]
        if b"\n" not in chunk and b"\r" not in chunk:
            if chunk:
                self._buffered += len(chunk)
                if self._buffered > self.max_line:
                    self._too_long("line")
                self._buffer.append(chunk)
            return []
        buffer = b"".join((*self._buffer, chunk)) if self._buffer else chunk
        if b"\r" in buffer:
            self._skip_lf = buffer.endswith(b"\r")
            buffer = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = buffer.split(b"\n")
        rest = lines.pop()
        self._buffer = [rest] if rest else []
        self._buffered = len(rest)
        if len(buffer) > self.max_line and max(self._buffered, max(map(len, lines))) > self.max_line:
            self._too_long("line")
        out: list[tuple[str, str]] = []
        for raw in lines:
            self._line(raw.decode("utf-8", "replace"), out)
        return out

    def _too_long(self, what: str) -> None:
        self._buffer, self._buffered, self._data, self._data_size = [], 0, [], 0  # nothing more is held
        raise LineTooLong(f"{what} longer than {self.max_line} bytes")

    def _line(self, line: str, out: list[tuple[str, str]]) -> None:
        if not line:
            if self._event or self._data or self._id or self._retry is not None:
                out.append((self._event or "message", "\n".join(self._data)))
                self._event, self._data, self._retry = "", [], None  # the id stays (as the spec says)
                self._data_size = 0
            return
        if line[0] == ":":
            return  # a comment
        name, _, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data_size += len(value) + 1
            if self._data_size > self.max_line:  # an event of many short data lines that never ends
                self._too_long("event")
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry":
            try:
                self._retry = int(value)
            except ValueError:
                pass
