"""What the flows share: HTTP calls, PKCE, the localhost callback server, device-code polling and
the race between a browser callback and a pasted code."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import html
import secrets as random_secrets
import time
import urllib.parse
from collections.abc import Mapping
from typing import Any

from atomic_host.contract.providers import LoginUI
from atomic_host.kit import secrets
from atomic_host.kit.llm.http_client import new_http_client
from builtin_plugins.oauth.parsing import (
    Callback,
    DeviceCode,
    OAuthError,
    TokenResponse,
    decode_body,
    parse_authorization_input,
    parse_callback_target,
    parse_device_poll,
    parse_token_response,
)

HTTP_TIMEOUT_S = 30.0


def endpoint(endpoints: Mapping[str, str], key: str, default: str) -> str:
    """The configured override of ``key`` (``ATOMIC_OAUTH_<PROVIDER>_<KEY>``), else ``default``."""
    value = endpoints.get(key)
    return value if isinstance(value, str) and value.strip() else default


def number(endpoints: Mapping[str, str], key: str, default: float) -> float:
    """A numeric override (seconds, ports); a value that does not parse keeps ``default``."""
    try:
        return float(endpoints[key])
    except (KeyError, ValueError, TypeError):
        return default


def expires_at(token: TokenResponse, default_s: float = 3600) -> int:
    """Epoch milliseconds when ``token``'s access token expires."""
    lifetime = token.expires_in if token.expires_in is not None else default_s
    return int(time.time() * 1000 + lifetime * 1000)


# -- HTTP ------------------------------------------------------------------------------------------


async def request(method: str, url: str, *, headers: Mapping[str, str] | None = None,
                  form: Mapping[str, str] | None = None, json_body: Any = None) -> tuple[int, str]:
    """``(status, body text)``; network failures become :class:`OAuthError`."""
    # lazy: httpx (~75 ms) only when a login sends a request (its exception types)
    import httpx

    client = new_http_client(timeout_s=HTTP_TIMEOUT_S)
    try:
        async with client:
            resp = await client.request(method, url, headers=dict(headers or {}), data=form, json=json_body)
            return resp.status_code, decode_body(resp.content)
    except httpx.HTTPError as exc:
        raise OAuthError(f"Cannot reach {url}: {type(exc).__name__}: {exc}") from exc


async def token_request(url: str, *, form: Mapping[str, str] | None = None, json_body: Any = None,
                        headers: Mapping[str, str] | None = None, what: str = "Token request") -> TokenResponse:
    """POST to a token endpoint (form-encoded or JSON) and parse the answer."""
    base = {"Accept": "application/json"}
    status, body = await request("POST", url, headers={**base, **(headers or {})}, form=form, json_body=json_body)
    return parse_token_response(status, body, what)


async def revoke_if_configured(credential: Mapping[str, Any], endpoints: Mapping[str, str], client_id: str) -> None:
    """RFC 7009 revocation of the refresh token when a ``revokeUrl`` is configured (none of the
    built-in providers documents one); best effort: a logout never fails because the server did."""
    url, token = endpoints.get("revokeUrl"), credential.get("refresh")
    if not url or not isinstance(token, str) or not token:
        return
    with contextlib.suppress(OAuthError):
        await request("POST", url, form={"token": token, "token_type_hint": "refresh_token",
                                         "client_id": endpoint(endpoints, "clientId", client_id)})


# -- PKCE ------------------------------------------------------------------------------------------


def pkce_pair() -> tuple[str, str]:
    """``(verifier, S256 challenge)`` (RFC 7636); the verifier is registered as a secret."""
    verifier = base64.urlsafe_b64encode(random_secrets.token_bytes(32)).rstrip(b"=").decode("ascii")
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode()
    secrets.register(verifier, "oauth:pkce_verifier")
    return verifier, challenge


def new_state() -> str:
    return random_secrets.token_hex(16)


# -- the localhost callback server -----------------------------------------------------------------

_PAGE = ("<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head>"
         "<body style='font-family:sans-serif;margin:3em'><h1>{title}</h1><p>{detail}</p></body></html>")


def _page(title: str, detail: str = "") -> bytes:
    return _PAGE.format(title=html.escape(title), detail=html.escape(detail)).encode()


class CallbackServer:
    """Listens on ``host:port`` for the browser's redirect to ``path``. A request whose ``state``
    does not match is answered 400 and ignored (it cannot end the login); a matching one settles
    :attr:`result` with the code, or with the server's ``error`` (the user denied access)."""

    def __init__(self, host: str, port: int, path: str, state: str) -> None:
        self.host, self.port, self.path, self.state = host, port, path, state
        self.result: asyncio.Future[Callback] = asyncio.get_running_loop().create_future()
        self._server: asyncio.Server | None = None

    async def start(self) -> bool:
        """Bind; False (and no server) when the port is taken."""
        try:
            self._server = await asyncio.start_server(self._serve, self.host, self.port)
        except OSError:
            return False
        self.port = self._server.sockets[0].getsockname()[1]
        return True

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            while (header := await asyncio.wait_for(reader.readline(), 10)) not in (b"\r\n", b"\n", b""):
                if len(header) > 8192:
                    break
            status, body = self._answer(line)
        except (TimeoutError, ConnectionError, asyncio.IncompleteReadError, ValueError):
            status, body = 400, _page("Bad request")
        with contextlib.suppress(ConnectionError):
            reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}.get(status, "Error")
            writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
                         f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
            await writer.drain()
        writer.close()

    def _answer(self, request_line: bytes) -> tuple[int, bytes]:
        parts = request_line.decode("latin-1").split()
        if len(parts) != 3 or parts[0] != "GET":
            return 400, _page("Bad request")
        callback = parse_callback_target(parts[1], self.path)
        if callback is None:
            return 404, _page("Callback route not found.")
        if callback.state != self.state:
            return 400, _page("State mismatch.", "This sign-in link is not the one atomic opened.")
        if callback.error:
            self._settle(callback)
            return 400, _page("Sign-in did not complete.", f"Error: {callback.error}")
        if not callback.code:
            return 400, _page("Missing authorization code.")
        secrets.register(callback.code, "oauth:code")
        self._settle(callback)
        return 200, _page("Signed in.", "You can close this window and return to atomic.")

    def _settle(self, callback: Callback) -> None:
        if not self.result.done():
            self.result.set_result(callback)


async def code_from_browser_or_paste(ui: LoginUI, server: CallbackServer | None, state: str) -> str:
    """The authorization code: from the callback server or pasted by the user, whichever comes
    first. A pasted URL or ``code#state`` must carry the login's state when it carries one."""
    manual = asyncio.ensure_future(ui.manual_code("Paste the authorization code or the full redirect URL:"))
    waiters: set[asyncio.Future[Any]] = {manual}
    if server is not None:
        waiters.add(server.result)
    try:
        done, _ = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not manual.done():
            manual.cancel()
            ui.manual_code_cancel()
    if server is not None and server.result in done:
        callback = server.result.result()
        if callback.error:
            raise OAuthError(f"Authorization failed: {callback.error}")
        assert callback.code
        return callback.code
    code, pasted_state = parse_authorization_input(manual.result())
    if pasted_state is not None and pasted_state != state:
        raise OAuthError("OAuth state mismatch")
    if not code:
        raise OAuthError("Missing authorization code")
    secrets.register(code, "oauth:code")
    return code


async def start_callback_server(ui: LoginUI, endpoints: Mapping[str, str], default_port: int, path: str,
                                state: str) -> CallbackServer | None:
    """The callback server on the configured host/port, or None (with a notice) when it is taken."""
    host = endpoint(endpoints, "callbackHost", "127.0.0.1")
    port = int(number(endpoints, "callbackPort", default_port))
    server = CallbackServer(host, port, path, state)
    if await server.start():
        return server
    ui.progress(f"Port {port} is in use: paste the redirect URL from the browser instead.")
    return None


class BrowserGrant:
    """What the token exchange of a browser (PKCE) sign-in needs: the code and the values the
    authorize request was made with."""

    __slots__ = ("client_id", "code", "redirect_uri", "state", "verifier")

    def __init__(self, code: str, verifier: str, state: str, redirect_uri: str, client_id: str) -> None:
        self.code, self.verifier, self.state = code, verifier, state
        self.redirect_uri, self.client_id = redirect_uri, client_id


async def browser_sign_in(
    ui: LoginUI,
    endpoints: Mapping[str, str],
    *,
    port: int,
    path: str,
    authorize_url: str,
    client_id: str,
    params: Mapping[str, str],
    message: str,
) -> BrowserGrant:
    """The browser half of a PKCE sign-in: a verifier and a state, the local callback server (or
    only a pasted code when its port is taken), the authorize URL shown to the user with ``params``
    added to the standard ones, then the code from the browser or the paste, whichever comes first."""
    verifier, challenge = pkce_pair()
    state = new_state()
    server = await start_callback_server(ui, endpoints, port, path, state)
    redirect_uri = endpoint(endpoints, "redirectUri", f"http://localhost:{server.port if server else port}{path}")
    client_id = endpoint(endpoints, "clientId", client_id)
    query = urllib.parse.urlencode({
        **params, "client_id": client_id, "response_type": "code", "redirect_uri": redirect_uri,
        "code_challenge": challenge, "code_challenge_method": "S256", "state": state,
    })  # fmt: skip
    try:
        ui.auth_url(f"{endpoint(endpoints, 'authorizeUrl', authorize_url)}?{query}", message)
        code = await code_from_browser_or_paste(ui, server, state)
    finally:
        if server is not None:
            await server.close()
    return BrowserGrant(code, verifier, state, redirect_uri, client_id)


# -- device code polling ---------------------------------------------------------------------------


async def poll_device_token(device: DeviceCode, poll: Any, endpoints: Mapping[str, str]) -> TokenResponse:
    """Poll ``poll()`` (→ ``(status, body)``) at the server's interval until it grants a token,
    refuses, or the code expires. ``slow_down`` adopts the server's new interval (else +5 s)."""
    floor = number(endpoints, "minPollInterval", 1.0)
    interval = max(floor, device.interval if device.interval is not None else 5.0)
    deadline = time.monotonic() + device.expires_in
    slowed = False
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            hint = " after slow_down responses (check the system clock)" if slowed else ""
            raise OAuthError(f"Device flow timed out{hint}")
        await asyncio.sleep(min(interval, remaining))
        status, body = await poll()
        result = parse_device_poll(status, body)
        if result.status == "complete" and result.token is not None:
            return result.token
        if result.status == "slow_down":
            slowed = True
            interval = max(floor, result.interval if result.interval is not None else interval + 5)
        elif result.status == "failed":
            raise OAuthError(result.message)
