"""A local OAuth authorization server for the login tests (http.server in a daemon thread).

It plays GitHub (device code, device token polling, the Copilot token exchange), OpenAI and
Anthropic (authorize with PKCE, token exchange and refresh, form or JSON) well enough to check what
the host sends: every request is recorded, and each endpoint's next answers can be scripted.

    with OAuthServer() as oauth:
        oauth.device_polls = ["authorization_pending", ("slow_down", 0.1), "ok"]
        oauth.fail_next("/token", 500)
        ... oauth.url("/token") ... oauth.requests ...
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
import urllib.parse
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from atomic_host.testing_sse import ServingThread


def fake_jwt(claims: dict[str, Any]) -> str:
    """An unsigned JWT carrying ``claims`` (the host reads, never verifies, the account id)."""

    def part(obj: Any) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none'})}.{part(claims)}.c2lnbmF0dXJl"


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: dict[str, Any]
    """Form or JSON fields."""
    json: bool
    at: float = field(default_factory=time.monotonic)


@dataclass
class Grant:
    """An authorization code the server issued."""

    challenge: str
    redirect_uri: str
    client_id: str
    state: str


@dataclass
class OAuthServer:
    access_prefix: str = "at-"
    """Prefix of issued access tokens (``sk-ant-oat01-`` makes the anthropic adapter use Bearer)."""
    account_id: str | None = None
    """When set, access tokens are JWTs with the ChatGPT account claim."""
    device_interval: float = 0
    device_expires_in: float = 900
    device_polls: list[Any] = field(default_factory=lambda: ["ok"])
    """Answers to device-token polls, in order: "ok", an error code, or ("slow_down", interval)."""
    token_lifetime: float = 3600
    copilot_lifetime: float = 1800
    requests: list[Seen] = field(default_factory=list)
    issued_access: list[str] = field(default_factory=list)
    issued_refresh: list[str] = field(default_factory=list)
    issued_codes: dict[str, Grant] = field(default_factory=dict)
    github_tokens: list[str] = field(default_factory=list)
    revoked: list[str] = field(default_factory=list)
    _failures: dict[str, deque[tuple[int, str | bytes]]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> OAuthServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                server._handle(self, "GET")

            def do_POST(self) -> None:
                server._handle(self, "POST")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._serving = ServingThread(self._httpd)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._serving.stop()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}{path}"

    def fail_next(self, path: str, status: int, body: str | bytes = '{"error":"server_error"}') -> None:
        """The next request to ``path`` gets ``status`` with ``body`` (bytes are sent as they are)."""
        self._failures.setdefault(path, deque()).append((status, body))

    def seen(self, path: str) -> list[Seen]:
        return [r for r in self.requests if r.path == path]

    def all_tokens(self) -> list[str]:
        """Every secret the server handed out (none may appear in the host's output)."""
        return [*self.issued_access, *self.issued_refresh, *self.issued_codes, *self.github_tokens]

    # -- tokens --------------------------------------------------------------------------------

    def _new_access(self) -> str:
        if self.account_id is not None:
            token = fake_jwt({"https://api.openai.com/auth": {"chatgpt_account_id": self.account_id},
                              "nonce": secrets.token_hex(8)})
        else:
            token = f"{self.access_prefix}{secrets.token_hex(16)}"
        self.issued_access.append(token)
        return token

    def _token_reply(self) -> dict[str, Any]:
        refresh = f"rt-{secrets.token_hex(16)}"
        self.issued_refresh.append(refresh)
        return {"access_token": self._new_access(), "refresh_token": refresh, "expires_in": self.token_lifetime,
                "token_type": "Bearer"}

    # -- requests ------------------------------------------------------------------------------

    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        parts = urllib.parse.urlsplit(h.path)
        query = dict(urllib.parse.parse_qsl(parts.query))
        raw = h.rfile.read(int(h.headers.get("content-length") or 0)).decode()
        is_json = "json" in (h.headers.get("content-type") or "")
        body = json.loads(raw) if is_json and raw else dict(urllib.parse.parse_qsl(raw))
        seen = Seen(method, parts.path, query, {k.lower(): v for k, v in h.headers.items()}, body, is_json)
        with self._lock:
            self.requests.append(seen)
            failure = self._failures.get(parts.path)
            if failure:
                status, text = failure.popleft()
                return self._send(h, status, text)
            status, reply, headers = self._route(seen)
        self._send(h, status, reply if isinstance(reply, str) else json.dumps(reply), headers)

    def _send(self, h: BaseHTTPRequestHandler, status: int, text: str | bytes,
              headers: dict[str, str] | None = None) -> None:
        data = text if isinstance(text, bytes) else text.encode()
        h.send_response(status)
        h.send_header("content-type", "application/json")
        for name, value in (headers or {}).items():
            h.send_header(name, value)
        h.send_header("content-length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _route(self, r: Seen) -> tuple[int, Any, dict[str, str]]:
        if r.path == "/authorize":
            return self._authorize(r)
        if r.path == "/device/code":
            return 200, {"device_code": f"dc-{secrets.token_hex(8)}", "user_code": "WDJB-MJHT",
                         "verification_uri": "https://github.example/login/device", "interval": self.device_interval,
                         "expires_in": self.device_expires_in}, {}
        if r.path == "/device/token":
            answer = self.device_polls.pop(0) if len(self.device_polls) > 1 else self.device_polls[0]
            if answer == "ok":
                token = f"gho_{secrets.token_hex(16)}"
                self.github_tokens.append(token)
                return 200, {"access_token": token, "token_type": "bearer", "scope": "read:user"}, {}
            if isinstance(answer, tuple):
                return 200, {"error": answer[0], "interval": answer[1]}, {}
            return 200, {"error": answer, "error_description": f"{answer} (test server)"}, {}
        if r.path == "/copilot/token":
            auth = r.headers.get("authorization", "")
            if auth.removeprefix("Bearer ") not in self.github_tokens:
                return 401, {"message": "Bad credentials"}, {}
            token = f"tid={secrets.token_hex(12)};exp={int(time.time()) + 1800};sku=free"
            self.issued_access.append(token)
            return 200, {"token": token, "expires_at": int(time.time() + self.copilot_lifetime)}, {}
        if r.path.startswith("/models/") and r.path.endswith("/policy"):  # Copilot: accept a model's policy
            return 200, {"state": r.body.get("state")}, {}
        if r.path == "/token":
            return self._token(r)
        if r.path == "/revoke":
            self.revoked.append(str(r.body.get("token")))
            return 200, {}, {}
        return 404, {"error": "not_found"}, {}

    def _authorize(self, r: Seen) -> tuple[int, Any, dict[str, str]]:
        q = r.query
        redirect = q["redirect_uri"]
        if q.get("deny"):
            params = {"error": "access_denied", "error_description": "The user said no", "state": q["state"]}
        else:
            code = f"code-{secrets.token_hex(8)}"
            self.issued_codes[code] = Grant(q["code_challenge"], redirect, q["client_id"], q["state"])
            params = {"code": code, "state": q.get("state_override", q["state"])}
        return 302, "", {"location": f"{redirect}?{urllib.parse.urlencode(params)}"}

    def _token(self, r: Seen) -> tuple[int, Any, dict[str, str]]:
        grant = r.body.get("grant_type")
        if grant == "authorization_code":
            issued = self.issued_codes.get(str(r.body.get("code")))
            if issued is None:
                return 400, {"error": "invalid_grant", "error_description": "unknown code"}, {}
            verifier = str(r.body.get("code_verifier", ""))
            challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if challenge != issued.challenge or r.body.get("redirect_uri") != issued.redirect_uri:
                return 400, {"error": "invalid_grant", "error_description": "PKCE or redirect_uri mismatch"}, {}
            return 200, self._token_reply(), {}
        if grant == "refresh_token":
            if r.body.get("refresh_token") not in self.issued_refresh:
                return 400, {"error": "invalid_grant", "error_description": "unknown refresh token"}, {}
            return 200, self._token_reply(), {}
        return 400, {"error": "unsupported_grant_type"}, {}

    def add_code(self, challenge: str, redirect_uri: str, client_id: str, state: str) -> str:
        """A code as if the user had signed in at ``/authorize`` (for the pasted-code flows)."""
        code = f"code-{secrets.token_hex(8)}"
        self.issued_codes[code] = Grant(challenge, redirect_uri, client_id, state)
        return code

    def add_refresh(self, token: str) -> None:
        self.issued_refresh.append(token)

    def add_github_token(self, token: str) -> None:
        self.github_tokens.append(token)
