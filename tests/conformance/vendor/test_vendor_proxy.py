"""Provider requests honour the standard proxy and CA environment and the ``proxy`` setting.

A small forwarding/CONNECT proxy written here records every request it relays. The model's base
URL names ``vendor.example``, which does not resolve: only the proxy (which maps it to the local
SSE server, as a real proxy resolves names for its clients) can reach it.
"""

from __future__ import annotations

import base64
import shutil
import socket
import socketserver
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from vendor_helpers import NO_RETRY, assistants, sse, stream_reply, text_of

from atomic_host.testing_sse import make_certificates

API = "anthropic-messages"


class RecordingProxy:
    """HTTP forward proxy + CONNECT tunnel on 127.0.0.1; ``routes`` maps ``host:port`` to where
    that name really is. ``seen`` holds ``(method, target, headers)`` per relayed request."""

    def __init__(self, routes: dict[str, tuple[str, int]]) -> None:
        self.routes = routes
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                proxy._serve(self.request)

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._serving = sse.ServingThread(self.server)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self._serving.stop()

    def _serve(self, client: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = client.recv(65536)
            if not chunk:
                return
            data += chunk
        head, rest = data.split(b"\r\n\r\n", 1)
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        method, target, version = request_line.split(" ")
        headers = {k.strip().lower(): v.strip() for k, v in (h.split(":", 1) for h in header_lines if ":" in h)}
        self.seen.append((method, target, headers))
        if method == "CONNECT":
            address = self.routes.get(target)
            if address is None:
                client.sendall(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n")
                return
            upstream = socket.create_connection(address)
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            self._relay(client, upstream, rest)
            return
        url = urlsplit(target)
        address = self.routes.get(f"{url.hostname}:{url.port or 80}")
        if address is None:
            client.sendall(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n")
            return
        # One request per connection (Connection: close), so every request passes through here.
        kept = [f"{k}: {v}" for k, v in headers.items() if not k.startswith("proxy-") and k != "connection"]
        path = url.path + (f"?{url.query}" if url.query else "")
        upstream_head = "\r\n".join([f"{method} {path} {version}", *kept, "connection: close", "", ""])
        upstream = socket.create_connection(address)
        upstream.sendall(upstream_head.encode("latin-1") + rest)
        self._relay(client, upstream, b"")

    @staticmethod
    def _relay(client: socket.socket, upstream: socket.socket, first: bytes) -> None:
        if first:
            upstream.sendall(first)

        def pump(src: socket.socket, dst: socket.socket) -> None:
            try:
                while chunk := src.recv(65536):
                    dst.sendall(chunk)
            except OSError:
                pass
            finally:
                for s in (src, dst):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

        other = threading.Thread(target=pump, args=(upstream, client), daemon=True)
        other.start()
        pump(client, upstream)
        other.join(10)
        upstream.close()


@pytest.fixture
def proxy(sse_server: Any) -> Iterator[RecordingProxy]:
    port = int(sse_server.base_url.rsplit(":", 1)[1])
    p = RecordingProxy({"vendor.example:80": ("127.0.0.1", port)})
    yield p
    p.close()


async def test_http_proxy_variable_routes_requests_and_keeps_its_credentials_private(
    vendor_host: Any, sse_server: Any, proxy: RecordingProxy
) -> None:
    sse_server.enqueue(stream_reply("anthropic/answer.sse"))
    authed = proxy.url.replace("http://", "http://proxyuser:s3cret-pw@")
    async with vendor_host(API, env={"HTTP_PROXY": authed}, base_url="http://vendor.example") as host:
        events = await host.client.prompt_and_wait("hi")
        assert text_of(assistants(events)[0]) == "All done."
    (method, target, headers) = proxy.seen[0]
    assert (method, target) == ("POST", "http://vendor.example/v1/messages")
    assert headers["proxy-authorization"] == "Basic " + base64.b64encode(b"proxyuser:s3cret-pw").decode()
    assert len(proxy.seen) == len(sse_server.requests) == 1
    assert not any("s3cret" in line for line in host.client.lines)


@pytest.mark.parametrize("no_proxy", ["vendor.example", ".example", "localhost,example", "*"])
async def test_no_proxy_hosts_are_reached_directly(
    vendor_host: Any, sse_server: Any, proxy: RecordingProxy, no_proxy: str
) -> None:
    env = {"HTTP_PROXY": proxy.url, "NO_PROXY": no_proxy}
    async with vendor_host(API, env=env, base_url="http://vendor.example", settings=NO_RETRY) as host:
        events = await host.client.prompt_and_wait("hi")
        (failed,) = assistants(events)
    # Direct means a DNS lookup of vendor.example, which fails; the proxy saw nothing.
    assert failed["stopReason"] == "error" and failed["errorMessage"].startswith("Connection error")
    assert proxy.seen == [] and sse_server.requests == []


async def test_loopback_is_never_proxied(vendor_host: Any, sse_server: Any, proxy: RecordingProxy) -> None:
    sse_server.enqueue(stream_reply("anthropic/answer.sse"))
    env = {"HTTP_PROXY": proxy.url, "HTTPS_PROXY": proxy.url, "ALL_PROXY": proxy.url}
    async with vendor_host(API, env=env) as host:  # base URL http://127.0.0.1:<port>
        events = await host.client.prompt_and_wait("hi")
        assert text_of(assistants(events)[0]) == "All done."
    assert proxy.seen == [] and len(sse_server.requests) == 1


async def test_proxy_setting_wins_over_the_environment(
    vendor_host: Any, sse_server: Any, proxy: RecordingProxy
) -> None:
    sse_server.enqueue(stream_reply("anthropic/answer.sse"))
    settings = {**NO_RETRY, "proxy": proxy.url}
    env = {"HTTP_PROXY": "http://127.0.0.1:9"}  # nothing listens there
    async with vendor_host(API, env=env, settings=settings, base_url="http://vendor.example") as host:
        events = await host.client.prompt_and_wait("hi")
        assert text_of(assistants(events)[0]) == "All done."
    assert [(m, t) for m, t, _ in proxy.seen] == [("POST", "http://vendor.example/v1/messages")]


# --- HTTPS through CONNECT, verified against SSL_CERT_FILE ------------------------------------------


@pytest.fixture(scope="module")
def tls_certs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A throwaway CA and a certificate for vendor.example signed by it (openssl CLI)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    return make_certificates(tmp_path_factory.mktemp("tls"), "vendor.example", "DNS:vendor.example")


@pytest.fixture
def tls_server(tls_certs: dict[str, Path]) -> Iterator[Any]:
    """The tests' SSE server speaking TLS with the vendor.example certificate."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tls_certs["cert"], tls_certs["key"])
    server = sse.SSEServer().start(tls=context)
    yield server
    server.stop()


@pytest.mark.parametrize("trusted", [True, False])
async def test_https_proxy_tunnels_and_ssl_cert_file_decides_trust(
    vendor_host: Any, tls_server: Any, tls_certs: dict[str, Path], trusted: bool
) -> None:
    port = int(tls_server.base_url.rsplit(":", 1)[1])
    tunnel = RecordingProxy({"vendor.example:443": ("127.0.0.1", port)})
    try:
        tls_server.enqueue(stream_reply("anthropic/answer.sse"))
        # The untrusted case names a bundle without our CA (just the leaf): nothing vouches for it.
        bundle = tls_certs["ca"] if trusted else tls_certs["cert"]
        env = {"HTTPS_PROXY": tunnel.url, "SSL_CERT_FILE": str(bundle)}
        async with vendor_host(API, env=env, base_url="https://vendor.example", settings=NO_RETRY) as host:
            events = await host.client.prompt_and_wait("hi")
            (reply,) = assistants(events)
    finally:
        tunnel.close()
    assert [(m, t) for m, t, _ in tunnel.seen] == [("CONNECT", "vendor.example:443")]
    if trusted:
        assert text_of(reply) == "All done." and len(tls_server.requests) == 1
    else:
        assert reply["stopReason"] == "error" and "CERTIFICATE_VERIFY_FAILED" in reply["errorMessage"]
        assert tls_server.requests == []
