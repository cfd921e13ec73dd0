"""The httpx client provider requests go through, configured from the standard network environment.

- ``HTTPS_PROXY`` / ``HTTP_PROXY`` / ``ALL_PROXY`` (lower-case forms too; on macOS and Windows also
  the system proxy settings, as :func:`urllib.request.getproxies` reads them) pick a proxy per URL
  scheme. ``NO_PROXY`` lists hosts reached directly, with curl's rules: ``example.com`` covers the
  domain and its subdomains, an IP address or ``localhost`` only itself, a ``scheme://host`` entry
  only that, and ``*`` turns every proxy off.
- The ``proxy`` setting (settings.json) is one proxy URL for every scheme; it wins over the
  ``*_PROXY`` variables, and ``NO_PROXY`` still applies.
- Loopback hosts (``localhost``, ``127.0.0.1``, ``[::1]``) never go through a proxy, as in Go's
  ``net/http``: a model server on this machine is not behind the corporate proxy.
- ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` replace the CA bundle used to verify servers.

httpx is imported only when a client is built, so ``atomic --mode rpc`` startup does not pay for it.
"""

from __future__ import annotations

import ipaddress
import os
import threading
import urllib.parse
import urllib.request
from typing import Any

from atomic_host.kit import _fast
from atomic_host.kit.log import log

__all__ = ["new_http_client", "redact_url"]

LOOPBACK_ROUTES = ("all://localhost", "all://127.0.0.1", "all://[::1]")


def redact_url(url: str) -> str:
    """``url`` with any ``user:password@`` replaced by ``***@`` (proxy URLs may carry credentials)."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urllib.parse.urlunsplit(parts._replace(netloc=f"***@{host}"))


def _with_scheme(proxy: str) -> str:
    proxy = proxy.strip()
    return proxy if "://" in proxy else f"http://{proxy}"


def _no_proxy_route(host: str) -> str:
    if "://" in host:
        return host
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return f"all://{host}" if host.lower() == "localhost" else f"all://*{host.lstrip('*')}"
    return f"all://[{address}]" if address.version == 6 else f"all://{address}"


def proxy_routes(proxy_setting: str | None = None) -> dict[str, str | None]:
    """URL patterns (httpx mount syntax) → proxy URL, or None for a direct connection.

    Empty when no proxy is configured: every request then connects directly.
    """
    environment = urllib.request.getproxies()
    routes: dict[str, str | None] = {}
    if proxy_setting:
        routes["all://"] = _with_scheme(proxy_setting)
    else:
        for scheme in ("all", "http", "https"):
            if environment.get(scheme):
                routes[f"{scheme}://"] = _with_scheme(environment[scheme])
    if not routes:
        return {}
    for host in (h.strip() for h in environment.get("no", "").split(",")):
        if host == "*":
            return {}
        if host:
            routes[_no_proxy_route(host)] = None
    for route in LOOPBACK_ROUTES:
        routes.setdefault(route, None)
    return routes


def _broken_proxy_transport(proxy: str, exc: Exception) -> Any:
    """A transport that fails every request with the reason the proxy could not be set up."""
    # lazy: httpx (~75 ms) loads with the first provider request, not at startup (tests/perf/startup_imports)
    import httpx

    message = f"Invalid proxy {redact_url(proxy)}: {exc}"

    class BrokenProxy(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            raise httpx.ProxyError(message, request=request)

    log.warning(f"{message}")
    return BrokenProxy()


TLS_ENV = ("SSL_CERT_FILE", "SSL_CERT_DIR", "SSLKEYLOGFILE")
"""The variables httpx reads when it builds a TLS context (``trust_env``)."""
_tls_contexts: dict[tuple[str | None, ...], Any] = {}
_tls_lock = threading.Lock()


def tls_context() -> Any:
    """The TLS context provider clients verify servers with, built once per process (per value of
    :data:`TLS_ENV`) and shared by every client: loading the CA bundle takes ~25 ms of CPU, which
    the first request of each new client paid (an ``ssl.SSLContext`` is safe to share between
    connections and threads). Thread-safe: the RPC warm-up thread may build it while a prompt asks."""
    key = tuple(os.environ.get(name) for name in TLS_ENV)
    with _tls_lock:
        context = _tls_contexts.get(key)
        if context is None:
            # lazy: httpx (~75 ms) loads with the first provider request, not at startup (tests/perf/startup_imports)
            import httpx

            context = _tls_contexts[key] = httpx.create_ssl_context(trust_env=True)
    return context


def new_http_client(*, proxy: str | None = None, timeout_s: float | None = None) -> Any:
    """An ``httpx.AsyncClient`` honouring the proxy variables, ``proxy`` (the setting) and the CA
    variables; ``timeout_s`` None = no overall timeout (streams have their own idle deadline).

    Its ``direct`` attribute is the :class:`~atomic_host.kit._fast.http1.DirectPool` that
    :func:`~atomic_host.kit.llm.http.sse_events` sends unproxied provider requests through (None
    under ``ATOMIC_PLAIN=1``: every request goes through httpx's transport)."""
    # lazy: httpx (~75 ms) loads with the first client, not at startup
    import httpx

    if not _fast.PLAIN:  # the tactics load only when they are on
        from atomic_host.kit._fast.sniffio_absent import note_missing_sniffio

        note_missing_sniffio()
    # One TLS context (the CA bundle loads in tens of ms) for every transport and the DirectPool;
    # trust_env: SSL_CERT_FILE / SSL_CERT_DIR.
    tls = tls_context()
    transports: dict[str, Any] = {}  # one transport per proxy URL

    def transport_for(url: str) -> Any:
        if url not in transports:
            try:
                transports[url] = httpx.AsyncHTTPTransport(proxy=httpx.Proxy(url), verify=tls)
            except Exception as exc:  # unknown scheme, socks without socksio, malformed URL
                transports[url] = _broken_proxy_transport(url, exc)
        return transports[url]

    mounts: dict[str, Any] = {}
    for pattern, url in proxy_routes(proxy).items():
        try:
            httpx.URL(pattern)
        except Exception:  # a NO_PROXY entry httpx cannot read (CIDR ranges, stray characters)
            log.warning(f"ignoring NO_PROXY entry {pattern.removeprefix('all://')!r}")
            continue
        mounts[pattern] = None if url is None else transport_for(url)
    # An explicit transport turns off httpx's own reading of the proxy variables: the routes above
    # are the whole story.
    class ProviderClient(httpx.AsyncClient):
        """httpx's client plus ``direct``: provider streams to servers no proxy route covers skip
        httpx's transport (kit/_fast/http1.py). Closing it closes both."""

        direct: Any = None

        async def aclose(self) -> None:
            if self.direct is not None:
                await self.direct.aclose()
            await super().aclose()

    client = ProviderClient(
        timeout=httpx.Timeout(timeout_s),
        transport=httpx.AsyncHTTPTransport(verify=tls),
        mounts=mounts,
    )
    if not _fast.PLAIN:  # the tactics load only when they are on
        from atomic_host.kit._fast.http1 import DirectPool

        client.direct = DirectPool(client, tls)
    return client
