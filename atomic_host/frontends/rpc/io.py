"""JSONL transport: an unlimited line reader on stdin and the one writer that owns stdout.

Framing: split on LF only, strip one trailing CR, never split on U+2028/U+2029 (they stay inside
JSON strings), no line-length limit — asyncio's ``StreamReader`` has a 64 KiB default limit, so
the reader is a small ``asyncio.Protocol`` over the raw pipe instead.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import stat
import sys
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from atomic_host.core.jsonfast import RawJSON, dumpb, dumps, spliced_parts  # dumps: re-exported, the writer's encoder
from atomic_host.core.protocol.declarations import DECLARATIONS
from atomic_host.kit import secrets
from atomic_host.kit.log import log

_EOF = None
HOLD_S = 0.0005
"""Longest a record waits for the records after it to share its ``write`` (see :class:`Output`)."""


class LineProtocol(asyncio.Protocol):
    """Collects bytes and hands complete lines (without the LF and one trailing CR) to a queue."""

    def __init__(self, queue: asyncio.Queue[bytes | None]) -> None:
        self.queue = queue
        self.buffer = bytearray()
        self.transport: asyncio.ReadTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        buf = self.buffer
        start = len(buf)
        buf += data
        # Only scan the new bytes for LF: a 50 MB line costs one pass, not one per chunk.
        pos = buf.find(b"\n", start)
        if pos < 0:
            return
        begin = 0
        while pos >= 0:
            end = pos - 1 if pos > begin and buf[pos - 1] == 0x0D else pos
            self.queue.put_nowait(bytes(buf[begin:end]))
            begin = pos + 1
            pos = buf.find(b"\n", begin)
        del buf[:begin]

    def eof_received(self) -> bool:
        if self.buffer:
            line = bytes(self.buffer)
            self.buffer.clear()
            self.queue.put_nowait(line[:-1] if line.endswith(b"\r") else line)
        self.queue.put_nowait(_EOF)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if self.buffer:
            self.eof_received()
        else:
            self.queue.put_nowait(_EOF)


async def open_stdin_lines() -> asyncio.Queue[bytes | None]:
    """Start reading stdin; complete lines arrive on the returned queue, ``None`` at EOF."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes | None] = asyncio.Queue()
    try:
        fd = os.dup(sys.stdin.fileno())
    except (AttributeError, ValueError, OSError):  # stdin closed (``<&-``): nothing will ever come
        queue.put_nowait(_EOF)
        return queue
    stdin = os.fdopen(fd, "rb", buffering=0)
    mode = os.fstat(fd).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd):
        await loop.connect_read_pipe(lambda: LineProtocol(queue), stdin)
        return queue

    # A regular file or a device such as /dev/null, as service managers, nohup and CI give a
    # process: epoll refuses them (/dev/null would fail later, inside the loop, and never see EOF).
    # Read them in a thread instead; /dev/null gives EOF at once.
    def pump() -> None:
        proto = LineProtocol(queue)
        try:
            while chunk := stdin.read(1 << 16):
                loop.call_soon_threadsafe(proto.data_received, chunk)
        except OSError as exc:
            log.warning(f"reading stdin failed: {exc}")
        finally:
            loop.call_soon_threadsafe(proto.eof_received)

    threading.Thread(target=pump, name="atomic-stdin", daemon=True).start()
    return queue


_BOM = b"\xef\xbb\xbf"


def decode_line(line: bytes) -> str:
    """A command line's text: UTF-8, with a leading BOM (as a client's first bytes often are)
    skipped; anything else that is not UTF-8 raises ``UnicodeDecodeError``.

    Not ``json.loads(bytes)``: that guesses UTF-16/32 from the first bytes (a line starting FF FE
    was reported as a utf-16 error) and lets surrogate code points encoded in UTF-8 bytes through
    (ED A0 80 became a lone "\\ud800"). Not the ``utf-8-sig`` codec either: its module is not
    loaded at startup (~0.8M instructions before the first response)."""
    return (line[3:] if line.startswith(_BOM) else line).decode("utf-8")


class Output:
    """The single owner of stdout: every record is written whole, as one line, in call order.

    Records sent on the event loop share ``write`` calls: the first record of a loop iteration
    goes out at once, the ones after it are held and written with it when the iteration ends, or
    as soon as a record comes :data:`HOLD_S` after that first one (a long iteration, such as a
    network read of many deltas, still streams). A streamed reply produces several deltas per
    network read, and one ``write`` (one wake-up of the client) per delta cost more than the rest
    of the per-delta work together (issue 12). Agent events (:data:`_HELD_KINDS`) and the
    ``prompt`` response are never written at once, even first: a run's iteration sends several
    (``agent_start`` … ``message_start``, then ``start``, ``text_start``, the first delta), which
    then share one write, and the response goes out with the run's first events once its model
    request is on the wire (the client's wake-up is then off the path to the first delta) —
    except a message's first content delta (:data:`_FIRST_DELTAS`), which is written at once
    with whatever is held before it: it is what a client waits for (time to first token),
    and it must not wait for the rest of its network read to be parsed; after writing it the
    host gives way to other processes once (:func:`_give_way`). Records sent off the
    loop's thread are written at once, as before. :meth:`flush` writes whatever is held; the
    frontends call it on exit.

    A record is written as a list of byte pieces with one ``writev``, never joined: a response
    that splices :class:`RawJSON` (a long session's entries or tree, megabytes kept by the
    session) writes those bytes as they are, and a big encoded response is written without the
    copies that adding the line feed and encoding the text made (issue 12: they were most of
    ``get_entries``' time, as page faults, and its peak memory)."""

    def __init__(self, fd: int | None = None) -> None:
        self.fd = sys.stdout.fileno() if fd is None else fd
        self.closed = False
        self.on_broken: Callable[[OSError], None] | None = None
        """Called once, on the thread that wrote, when a write failed: the reader is gone (EPIPE) or
        the stream cannot take more (a full disk, a terminal hung up); nothing is written after it."""
        self.listeners: list[Callable[[dict[str, Any]], None]] = []
        self._held: list[bytes] | None = None
        """Pieces of the lines sent since this loop iteration's first record (None: no flush is scheduled)."""
        self._owner = threading.get_ident()
        """The thread whose loop iterations are coalesced (the one that made this Output)."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._held_at = 0.0
        self._awaiting_delta = False
        """A ``message_start`` was sent and no content delta since: the next one is written at once."""
        _OUTPUTS.add(self)

    def send(self, record: dict[str, Any], line: str | None = None) -> None:
        """Write one record. ``line`` is its JSON when the caller already encoded it (hot path).

        Known credentials are masked in the line (and in the record listeners see)."""
        if line is not None:
            self._emit(record, [(line + "\n").encode()])
        else:
            self._emit(record, [self._encode(record), b"\n"])

    def _emit(self, record: dict[str, Any], pieces: list[bytes], raws: tuple[RawJSON, ...] = ()) -> None:
        """Write one record whose line (with its LF) is the concatenation of ``pieces``; ``raws``
        are the :class:`RawJSON` values whose bytes are among them."""
        if secrets.active():
            record, pieces = self._masked(record, pieces, raws)
        for listener in self.listeners:
            listener(record)
        if self.closed:
            return
        if threading.get_ident() != self._owner:  # another thread: at once, as it always was
            self._write(pieces)
            return
        kind = record.get("type")
        held_kind = kind in _HELD_KINDS or (kind == "response" and record.get("command") == "prompt")
        if held_kind and self._awaiting_delta and kind == "message_update":
            event = record.get("assistantMessageEvent")
            if type(event) is dict and event.get("type") in _FIRST_DELTAS:
                self._awaiting_delta = False
                held, self._held = self._held, None
                self._write(pieces if not held else held + pieces)
                _give_way()
                return
        elif kind == "message_start":
            self._awaiting_delta = True
        held = self._held
        if held is not None:
            # The held records' loop still running on this thread is the running loop (one per
            # thread): is_running() answers that without asking asyncio for the running loop
            # (a getpid() system call per record in CPython 3.11).
            loop = self._loop
            if loop is not None and loop.is_running() and time.monotonic() - self._held_at < HOLD_S:
                held += pieces
                return
            self.flush()  # held long enough (or that loop stopped before its flush ran)
        loop = _running_loop()
        if loop is not None:
            self._held, self._loop, self._held_at = [], loop, time.monotonic()
            loop.call_soon(self.flush)
            if held_kind:
                self._held += pieces
                return
        self._write(pieces)

    def flush(self) -> None:
        """Write the records held back in this loop iteration (if any)."""
        held, self._held = self._held, None
        if held and not self.closed:
            self._write(held)

    def _write(self, pieces: list[bytes]) -> None:
        """Write the pieces in order, whole, however the pipe takes them: small ones joined into
        one buffer and written with ``write`` (cheaper than a ``writev`` entry each), big ones
        given to ``writev`` as they are."""
        if len(pieces) == 1:
            views = [memoryview(pieces[0])]
        elif sum(map(len, pieces)) < _JOIN_BELOW:
            views = [memoryview(b"".join(pieces))]
        else:
            views = [memoryview(piece) for piece in pieces]
        try:
            while views:
                try:
                    n = os.write(self.fd, views[0]) if len(views) == 1 else os.writev(self.fd, views[:_IOV_MAX])
                except BlockingIOError:
                    # stdout is non-blocking (shared pipe): wait for the client to read.
                    import select

                    select.select([], [self.fd], [])
                    continue
                while views and n >= len(views[0]):  # drop what went out whole, cut the one cut
                    n -= len(views.pop(0))
                if n:
                    views[0] = views[0][n:]
        except OSError as exc:  # EPIPE: the reader is gone; ENOSPC, EIO: nothing can be written either
            if not self.closed:
                self.closed = True
                if self.on_broken is not None:
                    self.on_broken(exc)

    def _encode(self, record: dict[str, Any]) -> bytes:
        try:
            return dumpb(record)
        except (TypeError, ValueError) as exc:
            return self._unencodable(record, exc).encode()

    def _masked(
        self, record: dict[str, Any], pieces: list[bytes], raws: tuple[RawJSON, ...]
    ) -> tuple[dict[str, Any], list[bytes]]:
        """The record and its pieces with every known credential masked: the bytes are those of
        masking the whole line at once (``secrets.mask_json``), whatever the pieces. A piece that
        is a :class:`RawJSON`'s bytes (one of ``raws``) is masked once per secret set (its memo)."""
        if len(pieces) == 1 and not raws:  # most records: one piece, nothing spliced
            line = secrets.mask_json_bytes(pieces[0])
            if line is pieces[0]:
                return record, pieces
            masked = [line]
        elif secrets.splice_safe(pieces):
            memo = {id(raw.data): raw for raw in raws}
            masked = [_masked_raw(memo[id(p)]) if id(p) in memo else secrets.mask_json_bytes(p) for p in pieces]
            if all(m is p for m, p in zip(masked, pieces, strict=True)):
                return record, pieces
            line = b"".join(masked)
        else:  # a credential could straddle two pieces: the line is masked whole
            whole = b"".join(pieces)
            line = secrets.mask_json_bytes(whole)
            if line is whole:
                return record, pieces
            masked = [line]
        try:
            return json.loads(line), masked
        except RecursionError:  # a deep tree: mask_json keeps JSON valid (it matches escaped forms only)
            return record, masked
        except ValueError:  # JSON syntax inside a value matched across a string
            clean = secrets.mask_obj(_plain(record))
            return clean, [self._encode(clean), b"\n"]

    @staticmethod
    def _unencodable(record: dict[str, Any], exc: Exception) -> str:
        """A record that cannot be JSON-encoded still gets an answer: the one response a command is owed."""
        log.warning(f"cannot encode a {record.get('type')} record: {exc}")
        if record.get("type") != "response":
            return dumps(
                {
                    "type": "extension_error",
                    "extensionPath": "atomic-host",
                    "event": str(record.get("type")),
                    "error": f"Cannot encode event: {exc}",
                }
            )
        failure = {
            "type": "response",
            "command": record.get("command", "unknown"),
            "success": False,
            "error": f"Cannot encode response: {exc}",
        }
        if record.get("id") is not None:
            failure = {"id": record["id"], **failure}
        try:
            return dumps(failure)
        except (TypeError, ValueError):
            failure.pop("id", None)
            return dumps(failure)

    def respond(self, command: str, req_id: Any = None, data: Any = None, *, has_data: bool = True) -> None:
        record: dict[str, Any] = {"type": "response", "command": command, "success": True}
        if req_id is not None:
            record = {"id": req_id, **record}
        if has_data and data is not None:
            record["data"] = data
            raws = tuple(v for v in data.values() if type(v) is RawJSON) if type(data) is dict else ()
            if raws:  # get_entries, get_tree: the session's bytes are written as they are
                head = self._encode({k: v for k, v in record.items() if k != "data"})[:-1]
                pieces = spliced_parts(data)
                pieces[0] = head + b',"data":' + pieces[0]
                pieces[-1] += b"}\n"
                self._emit(record, pieces, raws)
                return
        elif has_data and data is None and command in _NULL_DATA_COMMANDS:
            record["data"] = None
        self.send(record)

    def error(self, command: str | None, req_id: Any, message: str, **extra: Any) -> None:
        record: dict[str, Any] = {
            "type": "response",
            "command": command or "unknown",
            "success": False,
            "error": message,
            **extra,
        }
        if req_id is not None:
            record = {"id": req_id, **record}
        self.send(record)


def _masked_raw(raw: RawJSON) -> bytes:
    """``raw``'s bytes masked with the current secret set, kept on ``raw`` until the set changes:
    a repeated ``get_entries`` or ``get_tree`` searches its megabytes once."""
    token = secrets.token()
    memo = raw.masked
    if memo is None or memo[0] is not token:
        memo = raw.masked = (token, secrets.mask_json_bytes(raw.data))
    return memo[1]


def _plain(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with its :class:`RawJSON` data values parsed (for masking it as objects)."""
    data = record.get("data")
    if type(data) is not dict or not any(type(v) is RawJSON for v in data.values()):
        return record
    # lazy: atomic_host.client is off startup's path; only a record with raw JSON data to mask needs it
    from atomic_host.client import loads_deep

    return {**record, "data": {k: loads_deep(v.data.decode()) if type(v) is RawJSON else v for k, v in data.items()}}


_IOV_MAX = os.sysconf("SC_IOV_MAX") if hasattr(os, "sysconf") else 1024
"""Most pieces one ``writev`` takes."""
_JOIN_BELOW = 1 << 16
"""Pieces smaller than this together are joined before they are written (see ``Output._write``)."""

_OUTPUTS: weakref.WeakSet[Output] = weakref.WeakSet()
_running_loop = asyncio._get_running_loop
"""The running loop of this thread or None (asyncio's C accessor; ``get_running_loop`` raises instead)."""


def flush_all() -> None:
    """Write what every :class:`Output` holds: before ``os._exit``, or at interpreter exit."""
    for out in list(_OUTPUTS):
        out.flush()


atexit.register(flush_all)

_HELD_KINDS = frozenset(
    {
        "agent_start",
        "agent_end",
        "turn_start",
        "turn_end",
        "message_start",
        "message_update",
        "message_end",
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_end",
    }
)
"""Agent events: held for the end of the loop iteration even when first in it (see :class:`Output`)."""
_FIRST_DELTAS = frozenset({"text_delta", "thinking_delta", "toolcall_delta"})
"""A message's first of these is written at once (see :class:`Output`)."""


def _give_way() -> None:
    """Let a process waiting for this cpu run now: called once per message, right after its first
    content delta was written.

    Linux wakes a pipe's reader on the writer's cpu (a "sync" wake-up: it expects the writer to
    sleep soon). When a burst of deltas has arrived at once (a local model server, a fast
    provider's first read), the host does not sleep soon: it parses the rest of the burst for
    milliseconds while the client that should show the first token waits in the same cpu's run
    queue, even with the other cpu idle (traced with ``perf sched`` on a 2-cpu machine: the client
    waited 2.4 ms behind the host; issue 12). ``sched_yield`` hands it the cpu; with nothing else
    runnable it returns at once (a system call, well under a microsecond)."""
    if _sched_yield is not None:
        _sched_yield()


_sched_yield: Callable[[], None] | None = getattr(os, "sched_yield", None)
"""``os.sched_yield`` where the platform has it (not on Windows)."""

def stdout_failure(exc: OSError) -> tuple[int, str]:
    """A failed write to stdout as every frontend reports it: the exit status and what happened.
    The reader gone (EPIPE): 141, as a writer killed by SIGPIPE (Python ignores SIGPIPE; each
    write would only fail again). Any other failure (a full disk behind a redirect, a terminal
    hung up): 1."""
    if isinstance(exc, BrokenPipeError):
        return 141, "stdout is closed"
    return 1, f"cannot write to stdout ({exc.strerror or exc})"


def write_failure(exc: OSError) -> tuple[int, str]:
    """How a server frontend (RPC, ACP) whose protocol stream failed (:attr:`Output.on_broken`)
    leaves: :func:`stdout_failure`'s status and its log line."""
    code, what = stdout_failure(exc)
    return code, f"{what}: the client is gone; exiting" if code == 141 else f"{what}; exiting"


_NULL_DATA_COMMANDS = frozenset(name for name, decl in DECLARATIONS.items() if decl.nullable)
"""The only commands whose response carries ``data: null`` instead of omitting it."""
