"""Server-sent events from the bytes of a response, read exactly as ``httpx_sse`` reads them.

``httpx_sse`` decodes each network chunk to text (``aiter_text``), splits it into lines
(``SSELineDecoder``) and interprets one line per call (``SSEDecoder``), three generator layers and
an event object per event; for a 200-delta reply that was most of the SSE share of a run
(issue 12). :class:`SSEDecoder` works on the bytes instead: lines end at LF, CR or CRLF (the
three, and only them, as the spec and ``httpx_sse`` say), each line is decoded as UTF-8 with
replacement on its own (an ASCII line end never falls inside a multi-byte sequence, so this is
the incremental decoder's text), and the fields are interpreted as ``httpx_sse`` does — including
its quirks: a blank line dispatches whenever any field is set, the last event id is never reset,
a leading BOM is kept. ``tests/providers/http/test_prov_sse_decoder.py`` holds it to ``httpx_sse`` on
hostile streams cut at every place.
"""

from __future__ import annotations

__all__ = ["LineTooLong", "SSEDecoder"]

MAX_LINE_BYTES = 32 * 1024 * 1024
"""Default longest line, and longest event (its data lines together), a stream may send
(``StreamOptions.max_line_bytes`` gives the bound of a provider request)."""


LINE_COST = 64
"""What a data line of an event counts for besides its characters: about what holding one more
string in the event's list costs, so an event of millions of tiny lines is bounded by its memory."""


class LineTooLong(ValueError):
    """A stream line or event is longer than the decoder's bound (``str(exc)`` says so)."""


class SSEDecoder:
    """Feed it a stream's byte chunks in order; each call returns the ``(event, data)`` pairs the
    chunk completed (``event`` is ``"message"`` when the stream named none).

    A line, or an event's data (each of its lines counted :data:`LINE_COST` more), longer than
    ``max_line`` bytes raises :class:`LineTooLong` as soon as it is known to be (an open event at
    the end of each chunk): a stream that never ends its line or event (or a compressed one that
    expands to gigabytes) is refused, not held in memory until the kernel steps in."""

    __slots__ = (
        "_buffer", "_buffered", "_counted", "_counted_data", "_data", "_data_size", "_event", "_id", "_retry",
        "_skip_lf", "max_line",
    )  # fmt: skip

    def __init__(self, max_line: int = MAX_LINE_BYTES) -> None:
        self.max_line = max_line
        self._buffer: list[bytes] = []
        """The start of a line whose end has not arrived, as the chunks that brought it: joined
        when its end arrives, so a line of 10 MB in 4 KB reads is one copy, not one per read."""
        self._buffered = 0
        """Bytes in ``_buffer``."""
        self._counted_data: list[str] | None = None
        self._counted = 0
        self._data_size = 0
        """Characters (and :data:`LINE_COST` each) of the first ``_counted`` lines of
        ``_counted_data``, the open event's data when :meth:`_bound_event` last looked."""
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
        if self._data:
            self._bound_event()
        return out

    def _bound_event(self) -> None:
        """An event is still open after a chunk: its data lines so far must stay within the bound
        (an event of short lines that never ends). Counted here, once per chunk and only the lines
        added since, not once per data line: the events of a reply mostly end in the chunk that
        began them."""
        data = self._data
        if data is not self._counted_data:  # a new event since the last count
            self._counted_data, self._data_size, self._counted = data, 0, 0
        self._data_size += sum(map(len, data[self._counted :])) + LINE_COST * (len(data) - self._counted)
        self._counted = len(data)
        if self._data_size > self.max_line:
            self._too_long("event")

    def _too_long(self, what: str) -> None:
        self._buffer, self._buffered, self._data, self._counted_data = [], 0, [], None  # nothing more is held
        raise LineTooLong(f"{what} longer than {self.max_line} bytes")

    def _line(self, line: str, out: list[tuple[str, str]]) -> None:
        if not line:
            if self._event or self._data or self._id or self._retry is not None:
                out.append((self._event or "message", "\n".join(self._data)))
                self._event, self._data, self._retry = "", [], None  # the id stays (as the spec says)
            return
        if line[0] == ":":
            return  # a comment
        name, _, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if name == "data":
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
