"""URLs: fetched with the host's HTTP client (proxy and CA settings), HTML turned into markdown.

Bounds: at most :data:`MAX_BYTES` of body, ``read.timeoutSeconds`` for the whole fetch (30 s by
default; a server that streams forever stops there), :data:`MAX_REDIRECTS` redirects, and an
abort ends it at once (the fetch is a task on the event loop, cancelled; nothing blocks it).
Addresses: a host that is or resolves to a private, loopback, link-local or otherwise reserved
address is refused, at every redirect, unless ``"read": {"allowPrivateUrls": true}`` or
``ATOMIC_ALLOW_PRIVATE_URL_READS=1``. (A name that resolves differently at connect time, DNS
rebinding, is not caught.) Credentials in the URL (``user:pass@``) go to that origin only: a
redirect to another scheme, host or port drops them, and no ``Authorization`` header follows it.
HTML becomes markdown in the document child process (BeautifulSoup + markdownify); PDFs and other
documents are saved to the session's private temp dir and converted like local files.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import socket
from typing import TYPE_CHECKING, Any

from atomic_host.contract.tools import ToolAborted, ToolError, ToolResult
from builtin_plugins.tools.sources.limits import human_size, read_settings, time_budget

if TYPE_CHECKING:
    from atomic_host.contract.tools import ToolContext

MAX_BYTES = 10 * 1024 * 1024
MAX_REDIRECTS = 5
ALLOW_ENV = "ATOMIC_ALLOW_PRIVATE_URL_READS"
USER_AGENT = "atomic-host (read tool)"
_DOCUMENT_TYPES = {
    "application/pdf": ".pdf",
    "application/epub+zip": ".epub",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ".docx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": ".pptx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": ".xlsx",
}


class _Fetched:
    def __init__(self, url: str, status: int, content_type: str, charset: str | None, body: bytes) -> None:
        self.url, self.status, self.content_type, self.charset, self.body = url, status, content_type, charset, body


def private_allowed(settings: object) -> bool:
    return read_settings(settings).get("allowPrivateUrls") is True or os.environ.get(ALLOW_ENV) == "1"


def _refused(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    mapped = getattr(address, "ipv4_mapped", None)
    if mapped is not None:
        address = mapped
    return (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_reserved
        or address.is_multicast
        or address.is_unspecified
    )


async def check_host(url: str, host: str, port: int) -> None:
    """Raise unless every address ``host`` resolves to is public."""
    try:
        addresses = [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as e:
            raise ToolError(f"Cannot resolve {host}: {e}") from e
        addresses = [ipaddress.ip_address(info[4][0].split("%", 1)[0]) for info in infos]
    for address in addresses:
        if _refused(address):
            raise ToolError(
                f"Refusing to read {url}: {host} is a private or loopback address ({address}). "
                f'Allow such reads with the setting "read": {{"allowPrivateUrls": true}} or {ALLOW_ENV}=1.'
            )


def _origin(url: Any) -> tuple[str, str, int | None]:
    return (url.scheme, url.host, url.port)


def _new_client(ctx: ToolContext) -> Any:
    """The host's HTTP client setup (proxies, CA bundle): imports httpx and reads the CA bundle, so
    it is built in a thread, not on the loop."""
    from atomic_host.kit.llm.http_client import new_http_client

    return new_http_client(proxy=ctx.settings.get("proxy") if isinstance(ctx.settings, dict) else None)


async def _fetch(url_text: str, ctx: ToolContext, allow_private: bool) -> _Fetched:
    client = await asyncio.to_thread(_new_client, ctx)
    try:
        return await _follow(client, url_text, allow_private)
    finally:
        await client.aclose()


async def _follow(client: Any, url_text: str, allow_private: bool) -> _Fetched:
    """GET ``url_text`` and the redirects after it, checking each hop; the body within its bounds."""
    import httpx  # loaded by _new_client

    from atomic_host.kit.llm.http_client import redact_url

    try:
        url = httpx.URL(url_text)
    except httpx.InvalidURL as e:
        raise ToolError(f"Invalid URL {redact_url(url_text)}: {e}") from e
    first_origin = _origin(url)
    credentials = (url.username, url.password) if url.userinfo else None
    try:
        for _hop in range(MAX_REDIRECTS + 1):
            if url.scheme not in ("http", "https"):
                raise ToolError(f"Redirected to {redact_url(str(url))}: only http and https URLs are read")
            if not allow_private:
                await check_host(redact_url(str(url)), url.host, url.port or (443 if url.scheme == "https" else 80))
            same = _origin(url) == first_origin
            send = url.copy_with(username=None, password=None) if url.userinfo else url
            auth = httpx.BasicAuth(*credentials) if credentials and same else None
            headers = {"User-Agent": USER_AGENT, "Accept": "text/html, text/plain, application/json, */*;q=0.5"}
            async with client.stream("GET", send, headers=headers, auth=auth, follow_redirects=False) as resp:
                if resp.is_redirect and "location" in resp.headers:
                    url = url.join(resp.headers["location"])
                    continue
                body = bytearray()
                async for chunk in resp.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_BYTES:
                        raise ToolError(
                            f"{redact_url(str(send))} sent more than {human_size(MAX_BYTES)}; stopped reading it"
                        )
                content_type = resp.headers.get("content-type", "").split(";")[0].strip().lower()
                return _Fetched(str(send), resp.status_code, content_type, resp.charset_encoding, bytes(body))
        raise ToolError(f"{redact_url(url_text)}: more than {MAX_REDIRECTS} redirects; stopped")
    except httpx.HTTPError as e:
        raise ToolError(f"Cannot read {redact_url(url_text)}: {type(e).__name__}: {e}") from e


async def read_url(url: str, params: Any, ctx: ToolContext) -> ToolResult:
    """``read`` of an http(s) URL (a trailing ``:A-B`` selects lines of what comes back)."""
    from atomic_host.kit.llm.http_client import redact_url
    from builtin_plugins.tools.sources.selector import Located, split_tail

    base, selector = split_tail(url)
    path_start = url.find("/", url.find("//") + 2)
    # a selector follows the path: not a port (http://host:8080), not inside a query or fragment
    if selector is not None and (path_start < 0 or len(base) < path_start or "?" in base or "#" in base):
        base, selector = url, None
    seconds = time_budget(ctx.settings)
    fetch = asyncio.ensure_future(_fetch(base, ctx, private_allowed(ctx.settings)))
    abort = asyncio.ensure_future(ctx.signal.wait())
    try:
        await asyncio.wait({fetch, abort}, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        if not fetch.done():
            if abort.done():
                raise ToolAborted("Read aborted")
            raise ToolError(f"Reading {redact_url(base)} took longer than {seconds:g} s; stopped")
        page = fetch.result()
    finally:
        abort.cancel()
        if not fetch.done():
            fetch.cancel()
            with contextlib.suppress(BaseException):
                await fetch
    label = redact_url(base)
    located = Located(label, None, None, selector)
    details: dict[str, Any] = {"url": page.url, "status": page.status, "contentType": page.content_type}
    if page.status >= 400:
        preview = page.body[:500].decode(page.charset or "utf-8", "replace")
        raise ToolError(f"{label} answered HTTP {page.status}: {preview}")
    note = f"(HTTP {page.status}" + (f", redirected to {page.url}" if page.url != label else "") + ")"
    return await _present(page, label, note, located, params, ctx, details, seconds)


async def _present(
    page: _Fetched,
    label: str,
    note: str,
    located: Any,
    params: Any,
    ctx: ToolContext,
    details: dict[str, Any],
    seconds: float,
) -> ToolResult:
    from atomic_host.kit.images import sniff_mime
    from builtin_plugins.tools.sources.text import select_lines

    kind = page.content_type
    if kind in ("text/html", "application/xhtml+xml") or (
        not kind and page.body.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html"))
    ):
        from builtin_plugins.tools.sources.documents import convert_html

        text = await convert_html(ctx, page.body.decode(page.charset or "utf-8", "replace"), label, seconds)
        details["converted"] = "markdown"
    elif kind.startswith("text/") or kind.endswith(("json", "xml", "javascript")) or kind in ("", "application/x-yaml"):
        text = page.body.decode(page.charset or "utf-8", "replace").replace("\r\n", "\n")
    elif sniff_mime(page.body[:16]) is not None:
        from builtin_plugins.tools.sources.images import image_result

        return await ctx.run_blocking(lambda: image_result(label, page.body, ctx, details), label="Read")
    elif kind in _DOCUMENT_TYPES or page.body.startswith(b"%PDF-"):
        return await _document(page, label, located, params, ctx, seconds)
    else:
        raise ToolError(
            f"{label} is {kind or 'binary data'} ({len(page.body):,} bytes): not text, a document or an image"
        )
    return await ctx.run_blocking(
        lambda: select_lines(label, text, located, params.offset, params.limit, details, note), label="Read"
    )


async def _document(
    page: _Fetched, label: str, located: Any, params: Any, ctx: ToolContext, seconds: float
) -> ToolResult:
    """A PDF (or other document) from the web: saved privately, then converted like a local file."""
    from builtin_plugins.tools.sources.documents import DocumentJob, convert, document_kind, private_copy

    path = private_copy(ctx, page.body, _DOCUMENT_TYPES.get(page.content_type, ".pdf"), label)
    kind = document_kind(path.name, page.body[:8], None) or "pdf"
    return await convert(DocumentJob(path, label, kind, located, params.offset, params.limit, True), ctx, seconds)
