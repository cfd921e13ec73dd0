"""Provider streams over plain asyncio, not httpx's transport: less host CPU per streamed reply (agent-latency bar).

The request is built by httpx, the response read here. Through httpx → httpcore → h11 → anyio a
200-delta reply cost several times the CPU per network read (figures: docs/performance.md), and a
new connection per request (a stream the adapter stops reading at ``[DONE]`` left its terminating
chunk unread, so httpcore could not reuse it). Issue 12. ``ATOMIC_PLAIN=1``: every request goes
through httpx's transport (``kit/llm/http_client.py`` builds no pool).

:class:`DirectPool` sends a request that ``httpx.AsyncClient.build_request`` built (the same
header order, defaults and JSON bytes as before), serialised and validated by h11, on a
keep-alive connection of its own (asyncio; TLS with the client's context, so ``SSL_CERT_FILE`` /
``SSL_CERT_DIR`` still apply, ALPN offering HTTP/1.1 only, as httpcore does without http2). h11
reads the response head (its checks, limits and error texts) — except a plain head that came whole
in the first read, which reads the same without it (:func:`_plain_head`, held to h11 by
``tests/providers/http/test_prov_http1_head.py``) — and :class:`DirectBody` reads the
body as h11's readers do — chunked, ``Content-Length`` or to the end of the connection, with
their error texts — without an event object per read. The response is an ``httpx.Response`` over
that body, so error bodies, ``Content-Encoding`` (httpx's decoders) and charsets behave as
before; failures are the httpx exceptions httpcore would raise, with the same texts.
``tests/providers/http/test_prov_http1.py`` holds it to httpx on hostile server bytes.

Requests whose URL a proxy route covers (see ``http_client``), and clients not built by
``new_http_client``, stay on httpx. Redirects are not followed (httpx's default, as before).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
import ssl
import time
from collections.abc import AsyncIterator
from typing import Any

import h11
import httpx

READ_SIZE = 64 * 1024
"""Bytes asked for per read (httpcore's ``READ_NUM_BYTES``)."""
MAX_INCOMPLETE = 100 * 1024
"""Longest response head, chunk header or trailer block (httpcore's ``MAX_INCOMPLETE_EVENT_SIZE``)."""
KEEPALIVE_S = 5.0
"""An idle connection older than this is closed, not reused (httpx's default ``keepalive_expiry``)."""
MAX_IDLE = 10
"""Idle connections kept per origin."""
MAX_BUFFER = 1 << 20
"""Received bytes held before reading from the socket pauses."""
_CHUNK_HEADER = re.compile(rb"([0-9A-Fa-f]{1,20})(?:;.*)?[ \t]*\r\n")
"""h11's ``chunk_header`` (``;.*`` stops at a bare LF, as there)."""
_BLANK_LINE = re.compile(rb"\n\r?\n")
_DISCONNECTED = "Server disconnected without sending a response."


class _Conn(asyncio.Protocol):
    """One TCP (or TLS) connection of the pool: the bytes received and not yet read, EOF, and
    flow control both ways (reading pauses past :data:`MAX_BUFFER`; ``drain`` waits while the
    transport's write buffer is full)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.eof = False
        self.error: Exception | None = None
        self.idle_since = 0.0
        self._waiter: asyncio.Future[None] | None = None
        self._writable: asyncio.Future[None] | None = None
        self._paused = False

    # -- protocol callbacks ---------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > MAX_BUFFER and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self._wake()
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    def pause_writing(self) -> None:
        self._writable = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)
        self._writable = None

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- use ------------------------------------------------------------------------------------
    async def read(self) -> bytes:
        """Up to :data:`READ_SIZE` bytes received (waiting for some); b"" at EOF. A reset
        connection raises its ``OSError``."""
        while not self.buffer and not self.eof:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        if self.buffer:
            # At most READ_SIZE, as httpcore reads: h11's size limits are checked between reads,
            # so the same reads give the same verdicts.
            data = bytes(self.buffer[:READ_SIZE])
            del self.buffer[:READ_SIZE]
            if self._paused and len(self.buffer) <= MAX_BUFFER and self.transport is not None:
                self._paused = False
                self.transport.resume_reading()
            return data
        if isinstance(self.error, OSError):
            raise self.error
        return b""

    def take_buffered(self) -> bytes:
        """The bytes already received, without waiting."""
        data = bytes(self.buffer)
        self.buffer.clear()
        return data

    def must_drain(self) -> bool:
        """Whether :meth:`drain` would raise or wait (else it returns at once)."""
        return self.error is not None or self._writable is not None

    async def drain(self) -> None:
        if self.error is not None:
            raise self.error if isinstance(self.error, OSError) else OSError(str(self.error))
        if self._writable is not None:
            await self._writable

    def reusable(self, now: float) -> bool:
        """Idle for less than :data:`KEEPALIVE_S`, and the server has neither closed it nor sent
        anything since (bytes on an idle connection would be read as the next response)."""
        return (
            now - self.idle_since < KEEPALIVE_S
            and self.transport is not None
            and not self.transport.is_closing()
            and not self.eof
            and not self.buffer
        )

    def close(self) -> None:
        if self.transport is not None:
            self.transport.abort()


class DirectPool:
    """Keep-alive connections per origin for the direct (unproxied) requests of one httpx client."""

    def __init__(self, client: httpx.AsyncClient, tls: ssl.SSLContext) -> None:
        self.client = client
        self.tls = tls
        """The client's TLS context (httpcore sets its ALPN to HTTP/1.1 too)."""
        self._idle: dict[tuple[bytes, bytes, int], list[_Conn]] = {}
        self._direct: dict[tuple[bytes, bytes, int | None], bool] = {}
        self._posts: dict[tuple[str, tuple[tuple[str, str], ...]], _PostTemplate | None] = {}
        """(URL, headers) → what :meth:`post` learnt from building that request with httpx (None:
        build every one with httpx)."""

    def post(
        self, url: str, headers: dict[str, str], body: Any, timeout_s: float | None
    ) -> httpx.Request | PreparedPost:
        """A JSON POST of ``body``: the request ``client.build_request`` makes, or, when an earlier
        request to the same URL with the same headers showed what that gives, its wire bytes
        without building it again (the URL parse, header merging and h11's checks of the same
        headers, every request: issue 12, docs/performance.md).

        The head is the one httpx and h11 produced for the first such request (its
        ``Content-Length`` set to this body's length), the body the JSON httpx encodes
        (:func:`json_body`; checked equal the first time). Used only while the client's own
        headers are as they were then and it has no cookies, params or base URL, for direct
        requests whose head ends with ``Content-Length`` (otherwise every request is built)."""
        client = self.client
        build = client.build_request
        if body is None or not self._plain_client():  # httpx sends no body for json=None
            return build("POST", url, headers=headers, json=body, timeout=httpx.Timeout(timeout_s))
        key = (url, tuple(headers.items()))
        template = self._posts.get(key, _UNKNOWN)
        if type(template) is _PostTemplate and template.client_headers == client.headers.raw:
            content = json_body(body)
            return PreparedPost(template.head + b"%d\r\n\r\n" % len(content) + content, template)
        request = build("POST", url, headers=headers, json=body, timeout=httpx.Timeout(timeout_s))
        if template is not None:  # unknown, or the client's headers changed since: learn again
            if len(self._posts) >= MAX_POST_TEMPLATES:
                self._posts.clear()
            self._posts[key] = self._template(request, headers, body)
        return request

    def _plain_client(self) -> bool:
        client = self.client
        return not client.cookies and not client.params and not client.base_url.raw_path.strip(b"/")

    def _template(self, request: httpx.Request, headers: dict[str, str], body: Any) -> _PostTemplate | None:
        if (
            not self.handles(request.url)
            or any(k.lower() in ("content-length", "transfer-encoding", "host") for k in headers)
        ):
            return None
        content = request.content
        try:
            wire = _serialise(h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_INCOMPLETE), request)
        except httpx.LocalProtocolError:
            return None  # the request fails as it is; every one goes the checked way
        length = b"Content-Length: "
        tail = length + b"%d\r\n\r\n" % len(content)
        if content != json_body(body) or not wire.endswith(tail + content):
            return None
        event = h11.Request(method=b"POST", target=request.url.raw_path, headers=request.headers.raw)
        head = wire[: len(wire) - len(content) - len(tail)] + length
        return _PostTemplate(head, request, event, self.client.headers.raw)

    def handles(self, url: httpx.URL) -> bool:
        """True when ``url`` goes straight to its server (no proxy route covers it) over http(s)."""
        key = (url.raw_scheme, url.raw_host, url.port)
        known = self._direct.get(key)
        if known is None:
            known = self._direct[key] = (
                url.scheme in ("http", "https")
                and bool(url.raw_host)
                and self.client._transport_for_url(url) is self.client._transport
            )
        return known

    async def _connect(self, url: httpx.URL, timeout_s: float | None) -> _Conn:
        origin = _origin(url)
        idle = self._idle.get(origin)
        now = time.monotonic()
        while idle:
            conn = idle.pop()
            if conn.reusable(now):
                return conn
            conn.close()
        tls = self.tls if url.scheme == "https" else None
        try:
            async with asyncio.timeout(timeout_s):
                return await _open(url.host, origin[2], tls)
        except TimeoutError as exc:
            raise httpx.ConnectTimeout("") from exc

    def _release(self, url: httpx.URL, conn: _Conn) -> None:
        idle = self._idle.setdefault(_origin(url), [])
        if len(idle) >= MAX_IDLE:
            conn.close()
            return
        conn.idle_since = time.monotonic()
        idle.append(conn)

    @contextlib.asynccontextmanager
    async def stream(
        self, request: httpx.Request | PreparedPost, timeout_s: float | None
    ) -> AsyncIterator[httpx.Response]:
        """Send ``request`` (built by the client, body already read, or :meth:`post`'s
        :class:`PreparedPost`) and yield its response, whose
        ``stream`` is a :class:`DirectBody`. The connection goes back to the pool when the body
        ended with nothing after it (read, or already received when the caller stopped reading:
        adapters stop at their terminal event); otherwise it is closed."""
        h11_conn: h11.Connection | None = None
        sent: h11.Request | None = None
        if isinstance(request, PreparedPost):
            wire = request.wire
            sent = request.event  # h11 is set up only if the response head needs it (_response_head)
            request = request.request
        else:
            h11_conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_INCOMPLETE)
            wire = _serialise(h11_conn, request)
        url = request.url
        conn = await self._connect(url, timeout_s)
        body: DirectBody | None = None
        try:
            try:
                assert conn.transport is not None
                conn.transport.write(wire)
                if conn.must_drain():
                    async with asyncio.timeout(timeout_s):
                        await conn.drain()
            except TimeoutError as exc:
                raise httpx.WriteTimeout("") from exc
            except OSError as exc:
                raise httpx.WriteError(str(exc)) from exc
            event, buffered = await _response_head(h11_conn, sent, conn, timeout_s)
            body = DirectBody(conn, event, buffered, timeout_s)
            response = httpx.Response(
                event.status_code,
                headers=event.headers.raw_items(),
                stream=body,
                request=request,
                extensions={"http_version": b"HTTP/" + event.http_version, "reason_phrase": event.reason},
            )
            yield response
        finally:
            if body is not None and body.finish_buffered():
                self._release(url, conn)
            else:
                conn.close()

    async def aclose(self) -> None:
        """Close every idle connection."""
        for idle in self._idle.values():
            for conn in idle:
                conn.close()
        self._idle.clear()


class _PostTemplate:
    """What :meth:`DirectPool.post` keeps per URL and headers: the head up to the
    ``Content-Length`` value, the request it came from and its h11 event, and the client headers
    it was made with."""

    __slots__ = ("client_headers", "event", "head", "request")

    def __init__(
        self, head: bytes, request: httpx.Request, event: h11.Request, client_headers: list[tuple[bytes, bytes]]
    ) -> None:
        self.head = head
        self.request = request
        self.event = event
        self.client_headers = client_headers


class PreparedPost:
    """A POST for :meth:`DirectPool.stream` already serialised: ``wire`` (head and body). Its
    ``request`` (the response's) is the httpx request of the same URL and headers the head was
    learnt from; its ``content`` is that first request's body, not this one's."""

    __slots__ = ("_template", "wire")

    def __init__(self, wire: bytes, template: _PostTemplate) -> None:
        self.wire = wire
        self._template = template

    @property
    def request(self) -> httpx.Request:
        return self._template.request

    @property
    def event(self) -> h11.Request:
        return self._template.event

    @property
    def url(self) -> httpx.URL:
        return self._template.request.url


_UNKNOWN: Any = object()
MAX_POST_TEMPLATES = 32
"""(URL, headers) pairs :meth:`DirectPool.post` keeps a head for (a new API key is a new pair)."""


_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
"""``json.dumps`` with httpx's arguments (it builds this very encoder on every call)."""
_FROZEN: dict[int, tuple[Any, str, bytes]] = {}
"""id(value) → (the value, kept so the id stays its own; its JSON, as text and as UTF-8): see
:func:`freeze_json`."""
MAX_FROZEN = 64


def freeze_json(value: Any) -> Any:
    """Return ``value`` with its JSON kept: a body's top-level value that is this very object is
    spliced into :func:`json_body` as that text instead of being encoded again. For values their
    owner builds once and never changes afterwards, such as an adapter's tool definitions (most
    of a request's bytes, encoded again for every request otherwise: issue 12)."""
    if len(_FROZEN) >= MAX_FROZEN:
        _FROZEN.clear()
    text = _ENCODE(value)
    _FROZEN[id(value)] = (value, text, text.encode("utf-8"))
    return value


_SLOT = "\x00atomic-frozen-json-{}\x00"
"""A frozen member's stand-in while the rest of a body is encoded (see :func:`json_body`)."""


def json_body(body: Any) -> bytes:
    """The JSON bytes httpx sends for ``json=body`` (``httpx._content.encode_json``). A dict's
    members given to :func:`freeze_json` are spliced in as their kept JSON: the rest of the body is
    encoded in one call with a stand-in string for each, and each stand-in's JSON, found exactly
    once in the result, is replaced by the kept bytes (a body whose own text holds a stand-in is
    encoded member by member instead). The bytes are the same either way."""
    if type(body) is not dict or not _FROZEN:
        return _ENCODE(body).encode("utf-8")
    frozen: list[bytes] = []
    members: dict[Any, Any] = {}
    for key, value in body.items():
        memo = _FROZEN.get(id(value))
        if memo is not None and memo[0] is value:
            if type(key) is not str:  # the encoder's key coercions: leave them to it
                return _ENCODE(body).encode("utf-8")
            value = _SLOT.format(len(frozen))
            frozen.append(memo[2])
        members[key] = value
    if not frozen:
        return _ENCODE(body).encode("utf-8")
    text = _ENCODE(members)
    out: list[bytes] = []
    for index, data in enumerate(frozen):
        head, slot, text = text.partition(_ENCODE(_SLOT.format(index)))
        if not slot or slot in text:
            return _json_body_by_member(body)
        out += (head.encode("utf-8"), data)
    out.append(text.encode("utf-8"))
    return b"".join(out)


def _json_body_by_member(body: dict[Any, Any]) -> bytes:
    """:func:`json_body` encoding each member on its own (the body's text holds a stand-in)."""
    parts = []
    for key, value in body.items():
        if type(key) is not str:
            return _ENCODE(body).encode("utf-8")
        memo = _FROZEN.get(id(value))
        parts.append(_ENCODE(key) + ":" + (memo[1] if memo is not None and memo[0] is value else _ENCODE(value)))
    return ("{" + ",".join(parts) + "}").encode("utf-8")


def _serialise(h11_conn: h11.Connection, request: httpx.Request) -> bytes:
    """``request`` as h11 serialises and validates it, as under httpcore (an invalid header is a
    LocalProtocolError there too, raised before anything is sent)."""
    try:
        return b"".join(
            h11_conn.send(event) or b""
            for event in (
                h11.Request(method=b"POST", target=request.url.raw_path, headers=request.headers.raw),
                h11.Data(data=request.content),
                h11.EndOfMessage(),
            )
        )
    except h11.LocalProtocolError as exc:
        raise httpx.LocalProtocolError(str(exc)) from exc


def _origin(url: httpx.URL) -> tuple[bytes, bytes, int]:
    return (url.raw_scheme, url.raw_host, url.port or (443 if url.scheme == "https" else 80))


async def _open(host: str, port: int, tls: ssl.SSLContext | None) -> _Conn:
    """Connect to the first of ``host``'s addresses that answers, in getaddrinfo's order, as
    httpcore does. The texts are httpcore's: a name that does not resolve keeps the resolver's,
    refused or unreachable addresses are "All connection attempts failed", TLS keeps its own."""
    loop = asyncio.get_running_loop()
    try:
        # An IP address needs no resolver: no trip through the executor's thread for it.
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
    except socket.gaierror:
        try:
            addresses = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise httpx.ConnectError(str(exc)) from exc
    for family, type_, proto, _name, address in addresses:
        sock = socket.socket(family, type_, proto)
        try:
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            await loop.sock_connect(sock, address)
        except OSError:
            sock.close()
            continue
        except BaseException:
            sock.close()
            raise
        try:
            _transport, conn = await loop.create_connection(
                _Conn, sock=sock, ssl=tls, server_hostname=host if tls else None
            )
        except (ssl.SSLError, OSError) as exc:
            raise httpx.ConnectError(str(exc)) from exc
        return conn
    raise httpx.ConnectError("All connection attempts failed")


async def _read(conn: _Conn, timeout_s: float | None) -> bytes:
    try:
        if timeout_s is None:
            return await conn.read()
        async with asyncio.timeout(timeout_s):
            return await conn.read()
    except TimeoutError as exc:
        raise httpx.ReadTimeout("") from exc
    except OSError as exc:
        raise httpx.ReadError(str(exc)) from exc


async def _response_head(
    h11_conn: h11.Connection | None, sent: h11.Request | None, conn: _Conn, timeout_s: float | None
) -> tuple[Any, bytes]:
    """The final response head (1xx responses skipped, as httpcore does) and the bytes received
    after it. ``h11_conn`` is the connection that sent the request, or None for a
    :class:`PreparedPost` (``sent``: its template's event).

    A plain head (:func:`_plain_head`) that arrived whole in the first read is taken as it is: it
    is what h11 would make of those bytes. Anything else goes to h11, which reads the same bytes
    in the same reads as before, and so gives the same verdicts and error texts."""
    data = await _read(conn, timeout_s)
    plain = _plain_head(data)
    if plain is not None:
        return plain
    if h11_conn is None:
        assert sent is not None
        # h11 reads the response as the client of this request: it is given the head (the
        # template's event, validated when it was made; what it writes is not used), so it
        # expects a response to a POST. Reading one does not need the body sent through it.
        h11_conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_INCOMPLETE)
        h11_conn.send(sent)
    while True:
        if not data and h11_conn.their_state is h11.SEND_RESPONSE:
            raise httpx.RemoteProtocolError(_DISCONNECTED)
        h11_conn.receive_data(data)
        while True:
            try:
                event = h11_conn.next_event()
            except h11.RemoteProtocolError as exc:
                raise httpx.RemoteProtocolError(str(exc)) from exc
            if event is h11.NEED_DATA:
                break
            if isinstance(event, h11.Response) or (
                isinstance(event, h11.InformationalResponse) and event.status_code == 101
            ):
                return event, h11_conn.trailing_data[0]
        data = await _read(conn, timeout_s)


_STATUS_LINE = re.compile(rb"HTTP/(1\.[01]) ([2-5][0-9][0-9])(?: ([ -~]*))?")
"""A status line h11 reads the same (its ``status_line``, narrowed: HTTP/1.x, a final status, an
ASCII reason)."""
_HEADER_LINE = re.compile(rb"([-!#$%&'*+.^_`|~0-9a-zA-Z]+):[ \t]*([!-~]+(?:[ \t]+[!-~]+)*)?[ \t]*")
"""A header line h11 reads the same (its ``header_field``, narrowed to visible ASCII values)."""


class _Fields:
    """A plain head's header fields as h11's ``Headers``: iterated as (lower-case name, value)
    pairs; :meth:`raw_items` gives the names as sent."""

    __slots__ = ("_full",)

    def __init__(self, full: list[tuple[bytes, bytes, bytes]]) -> None:
        self._full = full

    def __iter__(self) -> Any:
        return ((name, value) for _, name, value in self._full)

    def __len__(self) -> int:
        return len(self._full)

    def raw_items(self) -> list[tuple[bytes, bytes]]:
        return [(raw, value) for raw, _, value in self._full]


class _PlainHead:
    """A final response head read by :func:`_plain_head`: the fields of h11's ``Response``."""

    __slots__ = ("headers", "http_version", "reason", "status_code")

    def __init__(self, status_code: int, http_version: bytes, reason: bytes, headers: _Fields) -> None:
        self.status_code = status_code
        self.http_version = http_version
        self.reason = reason
        self.headers = headers


def _plain_head(data: bytes) -> tuple[_PlainHead, bytes] | None:
    """The response head at the start of ``data`` and the bytes after it, when the whole head is
    there and is plain: CRLF line ends only, an HTTP/1.0 or 1.1 status line with a final status
    (200-599), header lines of a token, a colon and visible ASCII, at most one Content-Length (all
    digits) and at most one Transfer-Encoding (``chunked``). h11 gives such a head the same status,
    version, reason and fields (names lower-cased, the coding lower-cased), and no error; reading
    it with h11 was a visible share of a provider request's path (issue 12). Anything else is
    None: h11 reads it."""
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return None
    # Every line must match a pattern without CR or LF, so h11's first blank line (``\n\r?\n``)
    # is this one, and its lines (split at ``\r?\n``) are these.
    lines = data[:end].split(b"\r\n")
    status = _STATUS_LINE.fullmatch(lines[0])
    if status is None:
        return None
    full: list[tuple[bytes, bytes, bytes]] = []
    length = coding = False
    for line in lines[1:]:
        field = _HEADER_LINE.fullmatch(line)
        if field is None:
            return None
        raw, value = field[1], field[2] or b""
        name = raw.lower()
        if name == b"content-length":
            if length or not value.isdigit() or len(value) > 18:
                return None  # h11 joins, checks or refuses these
            length = True
        elif name == b"transfer-encoding":
            value = value.lower()
            if coding or value != b"chunked":
                return None
            coding = True
        full.append((raw, name, value))
    head = _PlainHead(int(status[2]), status[1], status[3] or b"", _Fields(full))
    return head, data[end + 4 :]


class DirectBody(httpx.AsyncByteStream):
    """A response body, framed as h11 frames it (chunked, ``Content-Length``, or until EOF), read
    from the connection: one bytes object per network read, not an event object per chunk.

    Errors are h11's, as httpx raises them: ``RemoteProtocolError`` with h11's text for a bad
    chunk header or footer, a trailer h11 refuses, a chunk header or trailer over the size limit,
    and a connection closed before the body's end. The data before a framing error is delivered
    first, as h11 hands out its events before the one that fails."""

    def __init__(self, conn: _Conn, head: Any, buffered: bytes, timeout_s: float | None) -> None:
        self.conn = conn
        self.timeout_s = timeout_s
        self.ended = False
        """The whole body was parsed."""
        self.rest = b""
        """Bytes after the body's end (a connection with any is not reused)."""
        self._keep_alive = head.http_version == b"1.1" and b"close" not in _comma_values(head.headers, b"connection")
        self._buf = buffered
        self._held: list[bytes] = []
        """Reads kept after ``_buf`` unjoined and unparsed while ``_buf`` starts a chunk header or a
        trailer block that none of them ends (see :meth:`_hold`)."""
        self._held_size = 0
        self._edge = b""
        """While reads are held: the last two bytes of ``_buf`` and the held reads."""
        self._left = 0
        """Chunked: data bytes of the current chunk still to come; sized: of the body."""
        self._footer = b""
        """Chunked: the part of a chunk's closing CRLF still to come."""
        self._trailer = False
        """Chunked: the zero chunk arrived; the trailer block comes next."""
        self._chunked = False
        self._sized = True
        if head.status_code in (204, 304) or isinstance(head, h11.InformationalResponse):
            pass  # no body
        elif _comma_values(head.headers, b"transfer-encoding"):
            self._chunked = True  # h11 accepted the head: "chunked" is the only coding it allows
        elif lengths := _comma_values(head.headers, b"content-length"):
            self._left = self._length = int(lengths[0])
        else:
            self._sized = False  # until the server closes (HTTP/1.0 framing)
            self._keep_alive = False
        self._length = self._left

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            data, error = self._parse()
            if data:
                yield data
            if error is not None:
                raise httpx.RemoteProtocolError(error)
            if self.ended:
                return
            while True:
                if len(self._buf) + self._held_size > MAX_INCOMPLETE:
                    raise httpx.RemoteProtocolError("Receive buffer too long")
                received = await _read(self.conn, self.timeout_s)
                if not received or not self._hold(received):
                    break
            if not received:
                if not self._sized:
                    self.ended = True
                    return
                if self._buf:  # h11: EOF with unparsed bytes, before its reader's own verdict
                    raise httpx.RemoteProtocolError("peer unexpectedly closed connection")
                raise httpx.RemoteProtocolError(
                    "peer closed connection without sending complete message body "
                    + (
                        "(incomplete chunked read)"
                        if self._chunked
                        else f"(received {self._length - self._left} bytes, expected {self._length})"
                    )
                )
            if self._held:
                self._buf = b"".join((self._buf, *self._held, received))
                self._held, self._held_size = [], 0
            else:
                self._buf += received

    def _hold(self, received: bytes) -> bool:
        """Keep ``received`` aside, unparsed, when the buffer is the start of a chunk header or of
        a trailer block and ``received`` cannot end it (no CRLF across the seam; no blank line, the
        block's first two bytes already there): parsing it would find nothing either. Joining and
        searching the buffer on every read was quadratic in its length: a 90 KB chunk extension
        arriving a byte per read took 3.5 s (h11, which this reads as, looks at each byte once)."""
        buf = self._buf
        if not buf or not self._chunked or self._left or self._footer:
            return False
        held = self._held
        edge = self._edge if held else buf[-2:]
        if self._trailer:
            if len(buf) + self._held_size < 2 or _BLANK_LINE.search(received):
                return False
            if _BLANK_LINE.search(edge + received[:2]):
                return False
        elif b"\r\n" in received or (edge[-1:] == b"\r" and received[:1] == b"\n"):
            return False
        held.append(received)
        self._held_size += len(received)
        self._edge = (edge + received[-2:])[-2:]
        return True

    def finish_buffered(self) -> bool:
        """Whether the connection can be reused: after reading the bytes already received (the
        caller may have stopped before the end, say at a terminal ``[DONE]``) the body has ended,
        nothing follows it, and the server keeps the connection open."""
        if not self.ended and self._keep_alive:
            self._buf = b"".join((self._buf, *self._held, self.conn.take_buffered()))
            self._held, self._held_size = [], 0
            self._parse()
        return self.ended and self._keep_alive and not self.rest

    def _parse(self) -> tuple[bytes, str | None]:
        """The data in the buffer and the framing error that ends it (or None). Positions move
        over the buffer; only the unparsed tail (part of a chunk header, footer or trailer) is
        kept for the next read."""
        buf = self._buf
        if not self._chunked:
            if not self._sized:
                self._buf = b""
                return buf, None
            data = buf[: self._left]
            self._left -= len(data)
            if not self._left:
                self.ended = True
                self.rest = buf[len(data) :]
            self._buf = b""
            return data, None
        out: list[bytes] = []
        error: str | None = None
        pos, size = 0, len(buf)
        left, footer = self._left, self._footer
        while pos < size:
            if left:
                take = buf[pos : pos + left]
                pos += len(take)
                left -= len(take)
                out.append(take)
                if not left:
                    footer = b"\r\n"
            elif footer:
                got = buf[pos : pos + len(footer)]
                if got != footer[: len(got)]:
                    error = f"malformed chunk footer: {bytearray(got)!r} (expected {footer!r})"
                    break
                pos += len(got)
                footer = footer[len(got) :]
            elif self._trailer:
                end = _trailer_end(buf, pos)
                if end < 0:
                    break
                error = _trailer_error(buf[pos:end])
                if error is None:
                    self.ended = True
                    self.rest = buf[end:]
                    pos = size
                break
            else:
                line_end = buf.find(b"\r\n", pos) + 2
                if line_end < 2:
                    break
                match = _CHUNK_HEADER.fullmatch(buf, pos, line_end)
                if match is None:
                    error = f"illegal chunk header: {bytearray(buf[pos:line_end])!r}"
                    break
                pos = line_end
                left = int(match[1], 16)
                self._trailer = not left
        self._left, self._footer = left, footer
        self._buf = buf[pos:] if pos < size else b""
        return (out[0] if len(out) == 1 else b"".join(out)), error

    async def aclose(self) -> None:
        pass  # the pool's context closes or keeps the connection


def _trailer_end(buf: bytes, pos: int) -> int:
    """End of the trailer block starting at ``pos`` (after its blank line), or -1: h11's
    ``maybe_extract_lines``."""
    if buf[pos : pos + 1] == b"\n":
        return pos + 1
    if buf[pos : pos + 2] == b"\r\n":
        return pos + 2
    match = _BLANK_LINE.search(buf, pos)
    return -1 if match is None else match.end()


def _trailer_error(block: bytes) -> str | None:
    """What h11 says of the trailer lines (it reads them as any header block), or None."""
    if block in (b"\n", b"\r\n"):
        return None
    probe = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_INCOMPLETE)
    try:
        probe.receive_data(b"GET / HTTP/1.0\r\n" + block)
        probe.next_event()
    except h11.RemoteProtocolError as exc:
        return str(exc)
    return None


def _comma_values(headers: Any, name: bytes) -> list[bytes]:
    """h11's ``get_comma_header``: the lower-cased, comma-split values of every ``name`` header."""
    values: list[bytes] = []
    for key, value in headers:
        if key == name:
            values.extend(v.strip().lower() for v in value.split(b",") if v.strip())
    return values
