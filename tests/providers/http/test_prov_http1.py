"""kit/_fast/http1.py against httpx, on a real local socket server sending hostile bytes.

Every response the server sends (a head with odd or broken lines, chunked bodies with sizes,
extensions, footers and trailers good and bad, Content-Length too short or too long, bodies that
run to EOF, gzip, invalid UTF-8, the connection closed anywhere, the bytes written in pieces cut
anywhere) is read once through httpx (what provider requests used before) and once through the
DirectPool of ``new_http_client``: status, headers, body bytes, and the exception's type and text
must be the same. The request bytes must be the same too. Then what only the pool does: keep-alive
reuse (also when the reader stopped at ``[DONE]``), a closed idle connection replaced, TLS with
SSL_CERT_FILE, abort and deadline while connecting, and the real host reusing one connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import itertools
import json
import shutil
import socket
import ssl
import threading
import time
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import SilentServer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atomic_host.contract.providers import StreamOptions
from atomic_host.kit import _fast
from atomic_host.kit._fast.http1 import freeze_json, json_body
from atomic_host.kit.llm.http import OPEN, ProviderError, StreamAborted, _body_bytes, _send, sse_events
from atomic_host.kit.llm.http_client import TLS_ENV, new_http_client, tls_context
from atomic_host.testing import start_host
from atomic_host.testing_sse import make_certificates

pytestmark = [
    pytest.mark.slow,  # hypothesis against httpx on hostile server bytes
    pytest.mark.skipif(_fast.PLAIN, reason="ATOMIC_PLAIN=1: no DirectPool to hold to httpx (httpx only)"),
]


class RawServer:
    """A TCP server on 127.0.0.1 that answers each request with the next scripted bytes.

    A script is ``(pieces, close)``: each piece is one ``sendall`` (with TCP_NODELAY, so the
    pieces tend to arrive as separate reads), a float a pause of that many seconds; ``close`` ends
    the connection after it, else the connection waits for its next request. The raw request
    bytes and the number of accepted connections are recorded. ``tls`` wraps every connection."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.scripts: deque[tuple[list[bytes | float], bool]] = deque()
        self.requests: list[bytes] = []
        self.connections = 0
        self.tls = tls
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def close(self) -> None:
        self._stop = True
        self._sock.close()

    def _accept(self) -> None:
        while not self._stop:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
            data = b""
            while True:
                while b"\r\n\r\n" not in data:
                    more = conn.recv(65536)
                    if not more:
                        return
                    data += more
                head, _, data = data.partition(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":", 1)[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    ),
                    0,
                )
                while len(data) < length:
                    data += conn.recv(65536)
                self.requests.append(head + b"\r\n\r\n" + data[:length])
                data = data[length:]
                pieces, close = (
                    self.scripts.popleft()
                    if self.scripts
                    else ([b"HTTP/1.1 500 Oops\r\ncontent-length: 0\r\n\r\n"], True)
                )
                for piece in pieces:
                    if isinstance(piece, float):
                        time.sleep(piece)
                    else:
                        conn.sendall(piece)
                if close:
                    return
        except OSError:
            return
        finally:
            with contextlib.suppress(OSError):
                conn.close()


@pytest.fixture
def raw_server() -> Iterator[RawServer]:
    server = RawServer()
    yield server
    server.close()


async def _outcome(client: httpx.AsyncClient, url: str) -> tuple[Any, ...]:
    """What reading one response gives: (status, headers, body bytes, error type, error text)."""
    status, headers, body, error = None, None, b"", None
    try:
        direct = getattr(client, "direct", None)
        if direct is not None:  # the way provider streams build it (the second one is a PreparedPost)
            request: Any = direct.post(url, {"content-type": "application/json", "accept": "text/event-stream"},
                                       {"q": 1}, None)  # fmt: skip
        else:
            request = client.build_request(
                "POST", url, headers={"content-type": "application/json", "accept": "text/event-stream"}, json={"q": 1}
            )
        async with _send(client, request, None) as resp:
            status, headers = resp.status_code, resp.headers.raw
            async for chunk in _body_bytes(resp):
                body += chunk
    except (httpx.HTTPError, httpx.StreamError) as exc:
        error = (type(exc).__name__, str(exc))
    return status, headers, body, error


def _cut(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points) if b > a]


REFERENCE_TLS = ssl.create_default_context()
"""The reference httpx clients' TLS context, built once: they talk plain HTTP to the raw server, and
a context per client (the CA bundle read each time) was most of the property tests' time."""

TOKEN = st.text("abcdefghijklmnopqrstuvwxyz-ABCXYZ0123456789!#$%&'*+.^_`|~", min_size=1, max_size=12)
HOSTILE = st.binary(max_size=16)
HEADER_LINE = st.one_of(
    st.builds(lambda k, v: k.encode() + b": " + v.encode(), TOKEN, TOKEN),
    st.builds(lambda k, v: k.encode() + b":" + v, TOKEN, HOSTILE),  # any bytes in a value
    st.builds(lambda v: b" " + v.encode(), TOKEN),  # obs-fold continuation
    st.sampled_from(
        [b"no colon", b": empty name", b"sp ace: x", b"x-big: " + b"v" * 50_000, b"x-huge: " + b"v" * 300_000]
    ),
)
STATUS = st.sampled_from(
    [b"HTTP/1.1 200 OK", b"HTTP/1.1 200", b"HTTP/1.0 200 OK", b"HTTP/1.1 404 Not Found", b"HTTP/1.1 500 ",
     b"HTTP/1.1 204 No Content", b"HTTP/1.1 304 Not Modified", b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK",
     b"HTTP/2 200", b"HTP/1.1 200 OK", b"HTTP/1.1 20 OK"]
)  # fmt: skip
# Not b"" (a head starting with a blank line): h11 calls that "no response line received" or
# "illegal request line" depending on whether the first read held the whole head, through httpx too.


@st.composite
def chunked(draw: st.DrawFn, body: bytes) -> tuple[list[bytes], bytes]:
    """Headers and a chunked encoding of ``body``, now and then broken."""
    out = b""
    for piece in _cut(body, draw(st.lists(st.integers(0, 10_000), max_size=6))):
        size = draw(st.sampled_from(["{:x}", "{:X}", "{:04x}", "{:x} ", "{:x};ext=1", '{:x}; q="a b"', "{:x}\t"]))
        out += size.format(len(piece)).encode() + b"\r\n" + piece
        out += draw(st.sampled_from([b"\r\n"] * 8 + [b"\n", b"XX", b"\r"]))
    out += draw(
        st.sampled_from([b"0\r\n"] * 6 + [b"zz\r\n", b"0x5\r\n", b"123456789012345678901\r\n", b"0\n", b"-1\r\n"])
    )
    out += draw(
        st.sampled_from(
            [b"\r\n"] * 6
            + [b"\n", b"x-trailer: 1\r\n\r\n", b"bad trailer\r\n\r\n", b" folded: x\r\n\r\n", b"a: 1\r\n b\r\n\r\n"]
        )
    )
    return [b"transfer-encoding: chunked"], out


@st.composite
def responses(draw: st.DrawFn) -> bytes:
    body = draw(st.one_of(st.binary(max_size=300), st.just(b"data: \xff\xfe invalid utf-8 \xc3\r\n\r\n")))
    framing = draw(st.sampled_from(["chunked", "length", "eof", "gzip"]))
    if framing == "chunked":
        headers, encoded = draw(chunked(body))
    elif framing == "length":
        delta = draw(st.sampled_from([0, 0, 0, 3, -3]))
        values = draw(st.sampled_from([[str(max(0, len(body) + delta))], ["abc"], ["5", "6"], ["-1"]]))
        headers, encoded = [f"content-length: {v}".encode() for v in values], body
    elif framing == "gzip":
        encoded = gzip.compress(body)
        if draw(st.booleans()):
            encoded = encoded[: len(encoded) // 2]  # a broken gzip stream
        headers = [b"content-encoding: gzip", f"content-length: {len(encoded)}".encode()]
    else:
        headers, encoded = [], body
    lines = draw(st.lists(HEADER_LINE, max_size=3))
    head = draw(STATUS) + b"\r\n" + b"\r\n".join([*headers, *lines, b"content-type: text/event-stream"])
    data = head + b"\r\n\r\n" + encoded
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]  # the server closes early
    return data


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(data=responses(), cuts=st.lists(st.integers(0, 400_000), max_size=5))
async def test_responses_read_the_same_as_through_httpx(raw_server: RawServer, data: bytes, cuts: list[int]) -> None:
    pieces = _cut(data, cuts)
    outcomes = []
    for client in (httpx.AsyncClient(trust_env=False, verify=REFERENCE_TLS), new_http_client(), new_http_client()):
        async with client:
            if len(outcomes) == 2:  # a first request teaches the pool the head: this one is a PreparedPost
                warm_up = b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"  # not kept
                raw_server.scripts.append(([warm_up], True))
                await _outcome(client, raw_server.base_url + "/v1/chat")
            raw_server.scripts.append((pieces, True))
            outcomes.append(await _outcome(client, raw_server.base_url + "/v1/chat"))
    assert outcomes[1] == outcomes[0]
    assert outcomes[2] == outcomes[0]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    headers=st.dictionaries(
        TOKEN, st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20), max_size=4
    ),
    body=JSON,
    path=st.sampled_from(["/v1/chat/completions", "/v1beta/models/m:streamGenerateContent?alt=sse", "/a b/é?x=ü"]),
)
async def test_request_bytes_are_the_ones_httpx_sends(
    raw_server: RawServer, headers: dict[str, str], body: Any, path: str
) -> None:
    sent: list[Any] = []
    for client in (httpx.AsyncClient(trust_env=False, verify=REFERENCE_TLS), new_http_client()):
        raw_server.scripts.append(([b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"], True))
        before = len(raw_server.requests)
        async with client:
            request = client.build_request("POST", raw_server.base_url + path, headers=headers, json=body)
            try:
                async with _send(client, request, None) as resp:
                    await resp.aread()
            except httpx.HTTPError as exc:  # a header h11 refuses (nothing is sent)
                sent.append((type(exc).__name__, str(exc), raw_server.requests[before:]))
            else:
                sent.append(raw_server.requests[before:])
        raw_server.scripts.clear()
    assert sent[1] == sent[0]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    headers=st.dictionaries(
        TOKEN, st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20), max_size=4
    ),
    bodies=st.lists(JSON, min_size=2, max_size=4).filter(lambda b: b[0] is not None) | st.lists(JSON, min_size=2),
    path=st.sampled_from(["/v1/chat/completions", "/a b/é?x=ü"]),
)
async def test_repeated_posts_send_the_bytes_httpx_sends(
    raw_server: RawServer, headers: dict[str, str], bodies: list[Any], path: str
) -> None:
    """``DirectPool.post``: after the first request to a URL with the same headers, the head is
    the learnt one (a PreparedPost, no httpx request built); every request's bytes, and the
    response read after it, are still the ones httpx gives."""
    headers = {"content-type": "application/json", **headers}  # as providers send (else httpx adds it last)
    sent: list[Any] = []
    kinds: list[str] = []
    reply = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok"
    for direct in (False, True):
        client = new_http_client() if direct else httpx.AsyncClient(trust_env=False, verify=REFERENCE_TLS)
        before = len(raw_server.requests)
        got: list[Any] = []
        async with client:
            for body in bodies:
                raw_server.scripts.append(([reply], False))
                url = raw_server.base_url + path
                try:
                    if direct:
                        request: Any = client.direct.post(url, headers, body, None)
                        kinds.append(type(request).__name__)
                    else:
                        request = client.build_request("POST", url, headers=headers, json=body)
                    async with _send(client, request, None) as resp:
                        got.append((resp.status_code, resp.headers.raw, await resp.aread()))
                except httpx.HTTPError as exc:  # a header h11 refuses (nothing is sent)
                    got.append((type(exc).__name__, str(exc)))
        sent.append((got, raw_server.requests[before:]))
        raw_server.scripts.clear()
    assert sent[1] == sent[0]
    learnable = not any(k.lower() in ("host", "content-length", "transfer-encoding") for k in headers)
    if learnable and bodies[0] is not None and all(len(g) == 3 for g in sent[1][0]):  # every request went out
        assert kinds[0] == "Request"
        assert kinds[1:] == ["Request" if body is None else "PreparedPost" for body in bodies[1:]]


def sse_reply(texts: list[str], *, close: bool = False, split_done: bool = False) -> tuple[list[bytes | float], bool]:
    """A chunked SSE reply; ``split_done`` sends the terminating chunk after a pause (the reader
    stops at [DONE] before it arrives)."""
    frames = [f"data: {json.dumps({'t': t})}\n\n".encode() for t in texts] + [b"data: [DONE]\n\n"]
    body = b"".join(f"{len(f):x}\r\n".encode() + f + b"\r\n" for f in frames)
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    return ([head + body, 0.2, b"0\r\n\r\n"] if split_done else [head + body + b"0\r\n\r\n"]), close


async def _texts(url: str, options: StreamOptions) -> list[str]:
    """The texts of one stream, read the way ``drive`` reads it: stop at [DONE]."""
    out = []
    async with contextlib.aclosing(sse_events(url, {}, {"stream": True}, options)) as events:
        async for _name, data in events:
            if (_name, data) == OPEN:
                continue
            if data == "[DONE]":
                break
            out.append(json.loads(data)["t"])
    return out


async def test_connections_are_reused_also_when_the_reader_stopped_at_done(raw_server: RawServer) -> None:
    client = new_http_client()
    options = StreamOptions(http_client=client)
    for i in range(3):
        raw_server.scripts.append(sse_reply([f"a{i}", f"b{i}"]))
        assert await _texts(raw_server.base_url + "/v1", options) == [f"a{i}", f"b{i}"]
    assert raw_server.connections == 1 and len(raw_server.requests) == 3
    # The end of the body had not arrived when the reader stopped: that connection is not reused.
    raw_server.scripts.append(sse_reply(["x"], split_done=True))
    raw_server.scripts.append(sse_reply(["y"]))
    assert await _texts(raw_server.base_url + "/v1", options) == ["x"]
    assert await _texts(raw_server.base_url + "/v1", options) == ["y"]
    assert raw_server.connections == 2
    await client.aclose()


async def test_a_connection_the_server_closed_while_idle_is_replaced(raw_server: RawServer) -> None:
    client = new_http_client()
    options = StreamOptions(http_client=client)
    raw_server.scripts.append(sse_reply(["a"], close=True))
    raw_server.scripts.append(sse_reply(["b"]))
    assert await _texts(raw_server.base_url + "/v1", options) == ["a"]
    await asyncio.sleep(0.1)  # the server's FIN arrives
    assert await _texts(raw_server.base_url + "/v1", options) == ["b"]
    assert raw_server.connections == 2
    await client.aclose()


async def test_connection_refused_reads_as_through_httpx() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens on it once closed
    url = f"http://127.0.0.1:{port}/v1"
    clients = (httpx.AsyncClient(trust_env=False, verify=REFERENCE_TLS), new_http_client())
    outcomes = [await _outcome(c, url) for c in clients]
    assert outcomes[1] == outcomes[0] == (None, None, b"", ("ConnectError", "All connection attempts failed"))


@pytest.mark.parametrize("scheme", ["https", "http"])
async def test_abort_and_deadline_end_a_request_stuck_connecting_or_waiting(scheme: str) -> None:
    server = SilentServer()
    url = f"{scheme}://127.0.0.1:{server.port}/v1"
    try:
        signal = asyncio.Event()
        asyncio.get_running_loop().call_later(0.2, signal.set)
        start = time.monotonic()
        with pytest.raises(StreamAborted):
            await _texts(url, StreamOptions(http_client=new_http_client(), signal=signal))
        assert time.monotonic() - start < 2
        with pytest.raises(ProviderError, match=r"^stream deadline exceeded$"):
            await _texts(url, StreamOptions(http_client=new_http_client(), stream_deadline_s=0.2))
    finally:
        server.close()


@pytest.fixture(scope="module")
def ip_certs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A throwaway CA and a certificate for 127.0.0.1 signed by it (openssl CLI)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    return make_certificates(tmp_path_factory.mktemp("tls"), "127.0.0.1", "IP:127.0.0.1")


@pytest.mark.parametrize("trusted", [True, False])
async def test_tls_trusts_ssl_cert_file_as_httpx_does(
    ip_certs: dict[str, Path], trusted: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(ip_certs["cert"], ip_certs["key"])
    server = RawServer(tls=context)
    monkeypatch.setenv("SSL_CERT_FILE", str(ip_certs["ca"] if trusted else ip_certs["cert"]))
    try:
        outcomes = []
        for client in (
            httpx.AsyncClient(trust_env=True, mounts={"all://": httpx.AsyncHTTPTransport()}),
            new_http_client(),
        ):
            server.scripts.append(sse_reply(["tls"]))
            async with client:
                outcomes.append(await _outcome(client, server.base_url + "/v1"))
    finally:
        server.close()
    assert outcomes[1] == outcomes[0]
    if trusted:
        assert outcomes[1][0] == 200 and b"tls" in outcomes[1][2]
    else:
        assert outcomes[1][3][0] == "ConnectError" and "CERTIFICATE_VERIFY_FAILED" in outcomes[1][3][1]


async def test_clients_share_one_tls_context_per_ca_setting(
    ip_certs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CA bundle is loaded once per process, not per client (~25 ms each), and again for a
    different SSL_CERT_FILE, which the clients built after it then verify with."""
    for name in TLS_ENV:
        monkeypatch.delenv(name, raising=False)
    first, second = new_http_client(), new_http_client()
    monkeypatch.setenv("SSL_CERT_FILE", str(ip_certs["ca"]))
    third, fourth = new_http_client(), new_http_client()
    try:
        assert first.direct.tls is second.direct.tls
        assert third.direct.tls is fourth.direct.tls is tls_context()  # SSL_CERT_FILE's
        assert third.direct.tls is not first.direct.tls
        monkeypatch.delenv("SSL_CERT_FILE")
        assert tls_context() is first.direct.tls
    finally:
        for client in (first, second, third, fourth):
            await client.aclose()


async def test_the_host_streams_replies_over_one_kept_alive_connection(raw_server: RawServer, tmp_path: Path) -> None:
    def chat(text: str) -> tuple[list[bytes | float], bool]:
        chunks = [{"choices": [{"index": 0, "delta": {"content": t}, "finish_reason": None}]} for t in text.split("|")]
        chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        frames = [f"data: {json.dumps(c)}\n\n".encode() for c in chunks] + [b"data: [DONE]\n\n"]
        body = b"".join(f"{len(f):x}\r\n".encode() + f + b"\r\n" for f in frames) + b"0\r\n\r\n"
        return [
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n" + body
        ], False

    providers = {
        "local": {"baseUrl": raw_server.base_url, "api": "openai-completions", "apiKey": "k", "models": [{"id": "m1"}]}
    }
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "models.json").write_text(json.dumps({"providers": providers}))
    raw_server.scripts.extend([chat("one |two "), chat("three |four ")])
    async with start_host("--model", "local/m1", "--no-session", base=tmp_path) as host:
        replies = []
        for prompt in ("a", "b"):
            events = await host.client.prompt_and_wait(prompt)
            (end,) = [e for e in events if e["type"] == "agent_end"]
            replies.append(end["messages"][-1]["content"][0]["text"])
    assert replies == ["one two ", "three four "]
    assert raw_server.connections == 1 and len(raw_server.requests) == 2


@settings(max_examples=200, deadline=None)
@given(body=st.dictionaries(st.text(max_size=5), JSON, max_size=4), frozen=JSON, key=st.text(max_size=5))
def test_json_body_with_a_frozen_member_is_the_json_httpx_sends(body: dict[str, Any], frozen: Any, key: str) -> None:
    """``freeze_json``: a body member kept encoded is spliced, and the bytes are still those of
    ``json.dumps`` with httpx's arguments (also for a frozen value that is not a member)."""
    expected = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    value = freeze_json([frozen])
    assert json_body(body) == expected
    body = {**body, key: value}
    assert json_body(body) == json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
