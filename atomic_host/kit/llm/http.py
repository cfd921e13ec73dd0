"""HTTP + SSE transport shared by the adapters: abort, stream deadline, error text, transport retry.

:func:`sse_events` races every wait for the next event (also the wait for the response
headers) against the abort signal and the idle deadline.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import datetime
import email.utils
import math
import random
import time
import zlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx

from atomic_host.contract.providers import StreamOptions
from atomic_host.kit.llm.abort import AbortSignal
from atomic_host.kit.llm.http1 import DirectBody, DirectPool, PreparedPost
from atomic_host.kit.llm.http_client import new_http_client
from atomic_host.kit.llm.sse import LineTooLong, SSEDecoder

MAX_ERROR_BODY = 4000
MAX_ERROR_READ = 1024 * 1024
"""Bytes of an error (or unexpected) response body read, decompressed; the rest is not read."""
INFLATE_PIECE = 1024 * 1024
"""Most bytes one step of decompressing a body gives."""
OPEN = ("__open__", "")
"""First item :func:`sse_events` yields: the response headers arrived (time for ``start``)."""


class ProviderError(Exception):
    """A request failure; ``str(exc)`` is the final ``errorMessage``."""

    def __init__(self, message: str, status: int | None = None, headers: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers


class StreamAborted(Exception):
    """The caller's abort signal fired."""


def http_error_text(status: int, body: str) -> str:
    """``"<status> <body>"`` (body trimmed to 4000 chars), or ``"<status> status code (no body)"``."""
    body = body.strip()
    if not body:
        return f"{status} status code (no body)"
    if len(body) > MAX_ERROR_BODY:
        body = body[:MAX_ERROR_BODY] + "…"
    return f"{status} {body}"


def transport_error_text(exc: BaseException) -> str:
    """Error text for a network failure, worded so the retry classifier recognises it."""
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        return f"Request timed out: {detail}"
    return f"Connection error: {detail}"


def retry_after_ms(headers: Any) -> int | None:
    """The delay a server asked for, in ms: ``retry-after-ms``, else ``retry-after`` (seconds or an
    HTTP date). None when neither header is there or parses; never negative."""
    if not headers:
        return None
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            value = float(ms)
        except ValueError:
            value = math.nan
        if math.isfinite(value):
            return max(0, round(value))
    after = headers.get("retry-after")
    if after is None:
        return None
    try:
        seconds = float(after)
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(after)
        except (TypeError, ValueError, IndexError):
            return None
        if parsed.tzinfo is None:  # an HTTP date is GMT; a zone-less one would compare as local time
            parsed = parsed.replace(tzinfo=datetime.UTC)
        seconds = parsed.timestamp() - time.time()
    if not math.isfinite(seconds):
        return None
    return max(0, round(seconds * 1000))


def _retry_delay_s(exc: ProviderError, attempt: int) -> float | None:
    """Seconds to wait before retrying ``exc``, or None when it is not retryable."""
    headers = exc.headers or {}
    should = (headers.get("x-should-retry") or "").lower()
    if should == "false":
        return None
    if should != "true" and exc.status is not None and not (exc.status in (408, 409, 429) or exc.status >= 500):
        return None
    if (asked := retry_after_ms(headers)) is not None:
        return asked / 1000
    base = min(0.5 * 2**attempt, 8.0)
    return base * (1 - 0.25 * random.random())


async def _events(
    client: httpx.AsyncClient,
    url: str,
    headers: dict[str, str],
    body: dict[str, Any],
    options: StreamOptions,
) -> AsyncIterator[Any]:
    """The request, with transport retry: yields :data:`OPEN`, then lists of ``(event, data)``
    pairs (those one network read completed, never empty)."""
    attempt = 0
    hooks = options.provider_hooks
    while True:
        opened = False
        try:
            direct: DirectPool | None = getattr(client, "direct", None)
            request: httpx.Request | PreparedPost = (
                direct.post(url, headers, body, options.timeout_s)
                if direct is not None
                else client.build_request(
                    "POST", url, headers=headers, json=body, timeout=httpx.Timeout(options.timeout_s)
                )
            )
            sent = time.monotonic()
            async with _send(client, request, options.timeout_s) as resp:
                if hooks is not None:
                    elapsed_ms = (time.monotonic() - sent) * 1000
                    await hooks.after_response(url, resp.status_code, resp.headers, elapsed_ms, attempt)
                if resp.status_code >= 400:
                    text = await _read_capped(resp)
                    raise ProviderError(http_error_text(resp.status_code, text), resp.status_code, resp.headers)
                ctype = resp.headers.get("content-type", "")
                if "text/event-stream" not in ctype.partition(";")[0]:
                    text = await _read_capped(resp)
                    raise ProviderError(f"Unexpected content-type {ctype!r}: {text[:MAX_ERROR_BODY]}")
                opened = True
                yield OPEN
                # httpx_sse's reading, on the bytes (kit/llm/sse.py), each line bounded
                decoder = SSEDecoder(options.max_line_bytes)
                # aclosing: when the consumer stops early, the iterator is closed here, not later
                # by the garbage collector on a loop that may be gone.
                async with contextlib.aclosing(_body_bytes(resp, ctype)) as chunks:
                    try:
                        async for chunk in chunks:
                            if pairs := decoder.feed(chunk):
                                yield pairs
                    except LineTooLong as exc:
                        raise ProviderError(
                            f"Provider stream {exc} (setting streamMaxLineBytes); the rest was not read"
                        ) from None
                return
        except httpx.TransportError as exc:
            err = ProviderError(transport_error_text(exc))
            if opened:
                raise err from exc
        except ProviderError as exc:
            err = exc
        # Retries happen only before any event was delivered, so the consumer never sees duplicates.
        delay = _retry_delay_s(err, attempt)
        if delay is None or attempt >= options.max_retries:
            raise err
        cap_ms = options.max_retry_delay_ms
        if cap_ms and delay * 1000 > cap_ms:
            raise ProviderError(
                f"Server requested {round(delay)}s retry delay (max: {round(cap_ms / 1000)}s). {err}",
                err.status,
                err.headers,
            )
        await asyncio.sleep(delay)
        attempt += 1


def _send(
    client: httpx.AsyncClient, request: httpx.Request | PreparedPost, timeout_s: float | None
) -> contextlib.AbstractAsyncContextManager[httpx.Response]:
    """``client.stream`` for ``request``: through the client's :class:`DirectPool` when it has one
    and no proxy covers the URL (always so for a :class:`PreparedPost`: the pool's own context,
    not one wrapped in another), else through httpx."""
    direct: DirectPool | None = getattr(client, "direct", None)
    if direct is not None and (type(request) is PreparedPost or direct.handles(request.url)):
        return direct.stream(request, timeout_s)
    assert isinstance(request, httpx.Request)  # a PreparedPost comes from a pool, and goes back to it
    return _send_httpx(client, request)


@contextlib.asynccontextmanager
async def _send_httpx(client: httpx.AsyncClient, request: httpx.Request) -> AsyncIterator[httpx.Response]:
    resp = await client.send(request, stream=True)
    try:
        yield resp
    finally:
        await resp.aclose()


def _body_bytes(resp: httpx.Response, ctype: str = "") -> AsyncIterator[bytes]:
    """The response's body bytes: straight from a :class:`DirectBody` when nothing is to be
    decoded (no ``Content-Encoding``), ``gzip`` and ``deflate`` in bounded pieces
    (:func:`_inflate`), any other coding through httpx's decoders; a stream in another charset
    than UTF-8 (what every provider sends) as UTF-8 (:func:`_as_utf8`)."""
    coding = resp.headers.get("content-encoding", "").strip().lower()
    if not coding and isinstance(resp.stream, DirectBody):
        chunks = aiter(resp.stream)
    elif coding in ("gzip", "deflate"):
        chunks = _inflate(resp.aiter_raw(), coding)
    else:
        chunks = resp.aiter_bytes()
    encoding = _charset(resp, ctype)
    return chunks if encoding is None else _as_utf8(chunks, encoding)


async def _inflate(raw: AsyncIterator[bytes], coding: str) -> AsyncIterator[bytes]:
    """``raw`` decompressed as httpx's ``GZipDecoder``/``DeflateDecoder`` do (a ``deflate`` body
    without its zlib header read as raw deflate; errors as ``httpx.DecodingError``), but never
    more than :data:`INFLATE_PIECE` bytes at a time: 64 KB of a gzip bomb expand to 64 MB in one
    ``decompress`` call, which the line bound could only refuse after it was in memory."""
    gzip = coding == "gzip"
    inflater = zlib.decompressobj(zlib.MAX_WBITS | 16 if gzip else zlib.MAX_WBITS)
    first = not gzip  # deflate: the first attempt may find a raw stream (no zlib header)
    async with contextlib.aclosing(raw):
        async for data in raw:
            while data:
                try:
                    out = inflater.decompress(data, INFLATE_PIECE)
                except zlib.error as exc:
                    if first:
                        first = False
                        inflater = zlib.decompressobj(-zlib.MAX_WBITS)
                        continue
                    raise httpx.DecodingError(str(exc)) from exc
                first = False
                data = inflater.unconsumed_tail
                if out:
                    yield out
    try:
        tail = inflater.flush()
    except zlib.error as exc:  # pragma: no cover - httpx's flush guards the same
        raise httpx.DecodingError(str(exc)) from exc
    if tail:
        yield tail


def _charset(resp: httpx.Response, ctype: str) -> str | None:
    """The charset of a stream when it is not UTF-8 (None for UTF-8, and for a charset Python does
    not know, which httpx also reads as UTF-8)."""
    if ";" not in ctype and resp.default_encoding == "utf-8":
        return None  # no charset parameter: httpx reads it as its default (parsing that took ~20 µs)
    try:
        encoding = codecs.lookup(resp.encoding or "utf-8").name
    except LookupError:
        return None
    return None if encoding == "utf-8" else encoding


async def _as_utf8(chunks: AsyncIterator[bytes], encoding: str) -> AsyncIterator[bytes]:
    """``chunks`` of text in ``encoding``, re-encoded as UTF-8 (decoded as httpx decodes text,
    undecodable bytes replaced), so :class:`SSEDecoder` reads what httpx_sse read from them."""
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    async with contextlib.aclosing(chunks):
        async for chunk in chunks:
            if text := decoder.decode(chunk):
                yield text.encode("utf-8", "surrogatepass")
    if text := decoder.decode(b"", final=True):
        yield text.encode("utf-8", "surrogatepass")


async def _read_capped(resp: httpx.Response) -> str:
    """The start of a response body (at most :data:`MAX_ERROR_READ` bytes, decompressed) as text:
    an error body that never ends, or expands to gigabytes, is not read whole."""
    parts: list[bytes] = []
    size = 0
    async with contextlib.aclosing(_body_bytes(resp)) as chunks:
        async for chunk in chunks:
            parts.append(chunk[: MAX_ERROR_READ - size])
            size += len(parts[-1])
            if size >= MAX_ERROR_READ:
                break
    return b"".join(parts).decode("utf-8", errors="replace")


async def sse_events(
    url: str, headers: dict[str, str], body: dict[str, Any], options: StreamOptions
) -> AsyncIterator[tuple[str, str]]:
    """POST ``body`` and yield :data:`OPEN`, then ``(event, data)`` pairs until the stream ends.

    :func:`sse_batches` one pair at a time, the signal checked before each (see there)."""
    signal = options.signal
    async with contextlib.aclosing(sse_batches(url, headers, body, options)) as batches:
        async for batch in batches:
            if batch is OPEN:
                yield OPEN
                continue
            for index, pair in enumerate(batch):
                if index and signal is not None and signal.is_set():
                    raise StreamAborted
                yield pair


async def sse_batches(
    url: str, headers: dict[str, str], body: dict[str, Any], options: StreamOptions
) -> AsyncIterator[Any]:
    """POST ``body`` and yield :data:`OPEN`, then lists of ``(event, data)`` pairs until the
    stream ends: the pairs one network read completed, which arrived together (a reply's deltas
    come in bursts: a list per read, not two generator hops per pair, issue 12). A consumer that
    acts on the abort signal checks it before each pair after a list's first, as this stream
    does before each wait (:func:`drive`, :func:`sse_events`).

    Raises :class:`StreamAborted` when ``options.signal`` fires, :class:`ProviderError` on HTTP
    errors, network failures and when no event arrives within ``options.stream_deadline_s``.
    Use it inside ``contextlib.aclosing`` so an early exit closes the connection.

    Abort and deadline interrupt only the wait for the next event: a timer and the signal cancel
    this task while it waits, and the cancellation becomes the matching error. The timer is one
    for the whole stream, re-armed only when it fires: it checks how long the current wait has
    lasted (events come far more often than the deadline, so a timer per event, set and cancelled
    hundreds of times a reply, was pure overhead).
    """
    signal = options.signal
    if signal is not None and signal.is_set():
        raise StreamAborted
    own_client = options.http_client is None
    client: httpx.AsyncClient = options.http_client or new_http_client(timeout_s=options.timeout_s)
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    inner = _events(client, url, headers, body, options)
    deadline_s = options.stream_deadline_s
    waiting = False
    waiting_since = 0.0  # loop time the current wait for an event began (meaningful while waiting)
    fired: str | None = None
    timer: asyncio.TimerHandle | None = None

    def interrupt(kind: str) -> None:
        nonlocal fired
        if waiting and fired is None:
            fired = kind
            task.cancel()

    def check_deadline() -> None:
        nonlocal timer
        timer = None
        if not waiting:
            return  # the consumer has the stream: the next wait arms the timer again
        due = waiting_since + deadline_s
        if loop.time() >= due:
            interrupt("deadline")
        else:
            timer = loop.call_at(due, check_deadline)

    abort_waiter: asyncio.Future[bool] | None = None
    stop_watching: Callable[[], None] | None = None
    if isinstance(signal, AbortSignal):  # the run's signal: watched without a task of its own
        stop_watching = signal.on_set(lambda: interrupt("abort"))
    elif signal is not None:
        abort_waiter = asyncio.ensure_future(signal.wait())
        abort_waiter.add_done_callback(lambda _f: interrupt("abort"))
    try:
        while True:
            if signal is not None and signal.is_set():
                raise StreamAborted
            waiting_since = loop.time()
            if timer is None:
                timer = loop.call_at(waiting_since + deadline_s, check_deadline)
            waiting = True
            try:
                item = await inner.__anext__()
            except StopAsyncIteration:
                return
            except asyncio.CancelledError:
                if fired is None:
                    raise  # a real cancellation of the caller
                task.uncancel()
                if fired == "abort":
                    raise StreamAborted from None
                raise ProviderError("stream deadline exceeded") from None
            finally:
                waiting = False
            yield item
    finally:
        if timer is not None:
            timer.cancel()
        if abort_waiter is not None:
            abort_waiter.cancel()
        if stop_watching is not None:
            stop_watching()
        await inner.aclose()
        if own_client:
            await client.aclose()


def request_headers(model: dict[str, Any], options: StreamOptions, auth: dict[str, str]) -> dict[str, str]:
    """Headers of a streaming JSON request: content type, SSE accept, ``auth``, then the model's and
    the caller's headers (later ones win)."""
    headers = {"content-type": "application/json", "accept": "text/event-stream", **auth}
    headers.update(model.get("headers") or {})
    headers.update(options.headers)
    return headers


def bearer(options: StreamOptions) -> dict[str, str]:
    """``Authorization: Bearer`` for the request's API key (nothing without a key)."""
    return {"authorization": f"Bearer {options.api_key}"} if options.api_key else {}


class WireParser:
    """One request's translation from a wire API to builder calls; subclassed per adapter."""

    def __init__(self, out: Any) -> None:
        self.out = out

    def request(self) -> tuple[str, dict[str, str], dict[str, Any]]:
        """``(url, headers, json_body)`` of the request."""
        raise NotImplementedError

    def on_event(self, event: str, data: str) -> list[dict[str, Any]]:
        """Events for one SSE frame; may end the stream by returning a terminal event."""
        raise NotImplementedError

    def finish(self) -> list[dict[str, Any]]:
        """Events after the server closed the stream cleanly (must end with a terminal event)."""
        raise NotImplementedError


async def drive(
    parser: WireParser | Callable[[], WireParser], options: StreamOptions
) -> AsyncIterator[dict[str, Any]]:
    """Run ``parser``'s request and yield its events; every failure becomes one ``error`` event.

    ``parser`` may be given as the function that makes it: an adapter's ``stream`` can then return
    this generator itself (no generator of its own that yields each event again), and the parser
    is still made when the stream is first read, where a failure to make it is raised."""
    if not isinstance(parser, WireParser):
        parser = parser()
    out = parser.out
    signal = options.signal
    try:
        url, headers, body = parser.request()
        if (hooks := options.provider_hooks) is not None:  # plugins see (and may change) the request
            body = await hooks.before_request(url, body)
            headers = await hooks.before_headers(url, headers)
        events = sse_batches(url, headers, body, options)
        try:
            async for batch in events:
                if batch is OPEN:
                    yield out.start()
                    continue
                for index, (name, data) in enumerate(batch):
                    # the stream checks the signal before each wait; the pairs after a list's
                    # first are checked here, as when each was waited for on its own
                    if index and signal is not None and signal.is_set():
                        raise StreamAborted
                    for ev in parser.on_event(name, data):
                        yield ev
                    if out.finished:
                        return
        finally:
            await events.aclose()
        for ev in parser.finish():
            yield ev
    except StreamAborted:
        if not out.finished:
            yield out.error("", aborted=True)
    except ProviderError as exc:
        if not out.finished:
            event = out.error(str(exc))
            asked = retry_after_ms(exc.headers)
            if asked is not None:
                # The session's auto-retry waits this long (capped) instead of its own backoff.
                out.message["retryAfterMs"] = asked
            yield event
    except Exception as exc:  # a stream never raises: parse bugs and surprises become error events
        if not out.finished:
            yield out.error(f"{type(exc).__name__}: {exc}")
