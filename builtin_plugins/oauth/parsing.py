"""Parsers for what OAuth servers and browsers send back: token responses, device-code polls,
callback requests and pasted codes. Pure functions over untrusted text: each returns a typed result
or raises :class:`OAuthError` with a message fit for the user, never another exception.

Every token a parser accepts is registered with :mod:`atomic_host.kit.secrets` before it is
returned, so it is masked in whatever the host writes next.
"""

from __future__ import annotations

import base64
import json
import math
import urllib.parse
from dataclasses import dataclass
from typing import Any

from atomic_host.kit import secrets

MAX_BODY_SHOWN = 500
"""Characters of a server's error body quoted in an error message."""
MAX_TOKEN_CHARS = 32_768
"""Longest token accepted (JWTs with many claims run to a few KB; more is a broken server)."""
MAX_LIFETIME_S = 10 * 365 * 24 * 3600.0
"""A longer ``expires_in`` is taken as this: no arithmetic on it may overflow."""
MAX_POLL_INTERVAL_S = 60.0
"""A device-poll ``interval`` above this is taken as this (a hostile server cannot park the login)."""
MAX_DEVICE_LIFETIME_S = 3600.0
"""A device code lives at most this long here, whatever the server says (GitHub's: 900 s)."""
MAX_SHOWN_FIELD = 2048
"""Longest ``user_code``/``verification_uri`` shown to the user."""


class OAuthError(Exception):
    """A login or refresh step failed; ``str(exc)`` is shown to the user."""


def decode_body(raw: bytes) -> str:
    """A response body as text: UTF-8 with U+FFFD for bytes that are not (a server that sends
    Latin-1 or garbage gets a readable error, never a ``UnicodeDecodeError``)."""
    return raw.decode("utf-8", errors="replace")


def _shown(body: str) -> str:
    body = body.strip()
    return body if len(body) <= MAX_BODY_SHOWN else body[:MAX_BODY_SHOWN] + "…"


def _json_object(body: str) -> dict[str, Any] | None:
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _text(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) and value else None


def _token(data: dict[str, Any], key: str, what: str) -> str | None:
    """A token field: None when absent or not a non-empty string; :class:`OAuthError` when it is one
    no HTTP header could carry (over :data:`MAX_TOKEN_CHARS`, or not printable ASCII)."""
    value = _text(data, key)
    if value is None:
        return None
    if len(value) > MAX_TOKEN_CHARS:
        raise OAuthError(f"{what} returned {key} of {len(value)} characters (at most {MAX_TOKEN_CHARS})")
    if not value.isascii() or not value.isprintable() or " " in value:
        raise OAuthError(f"{what} returned {key} with characters a token cannot have")
    return value


def _seconds(data: dict[str, Any], key: str, cap: float = MAX_LIFETIME_S) -> float | None:
    """A non-negative number of seconds (a numeric string counts: some servers quote it), at most
    ``cap``; None when absent or unreadable."""
    value = data.get(key)
    if isinstance(value, str) and 0 < len(value) <= 32:
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        value = float(value)
    except OverflowError:  # an int with hundreds of digits
        return cap
    if not math.isfinite(value) or value < 0:
        return None
    return min(value, cap)


def error_of(data: dict[str, Any] | None) -> str | None:
    """``"<error>: <error_description>"`` of an OAuth error object, or None."""
    if data is None:
        return None
    error = data.get("error")
    if isinstance(error, dict):  # some servers nest it: {"error": {"type"/"code", "message"}}
        error = error.get("code") or error.get("type") or error.get("message")
    if not isinstance(error, str) or not error:
        return None
    description = data.get("error_description")
    text = f"{error}: {description}" if isinstance(description, str) and description else error
    return _shown(text)


def error_code(body: str) -> str | None:
    """The bare OAuth ``error`` code of a response body (``invalid_grant``), or None."""
    data = _json_object(body)
    error = data.get("error") if data is not None else None
    return error if isinstance(error, str) and error else None


@dataclass(frozen=True)
class TokenResponse:
    """A successful token endpoint answer."""

    access_token: str
    refresh_token: str | None
    expires_in: float | None
    """Seconds the access token lives, when the server said."""
    id_token: str | None = None


def parse_token_response(status: int, body: str, what: str = "Token request") -> TokenResponse:
    """Read a token endpoint's answer (RFC 6749 §5.1/§5.2). ``what`` names the step in errors."""
    data = _json_object(body)
    if status >= 400 or data is None:
        reason = error_of(data) or _shown(body) or "no body"
        raise OAuthError(f"{what} failed ({status}): {reason}")
    access = _token(data, "access_token", what)
    if access is None:
        reason = error_of(data)
        raise OAuthError(f"{what} failed: {reason}" if reason else f"{what} returned no access_token")
    refresh = _token(data, "refresh_token", what)
    id_token = _token(data, "id_token", what)
    secrets.register(access, "oauth:access")
    secrets.register(refresh, "oauth:refresh")
    secrets.register(id_token, "oauth:id_token")
    return TokenResponse(access, refresh, _seconds(data, "expires_in"), id_token)


@dataclass(frozen=True)
class CopilotToken:
    """The answer of GitHub's ``copilot_internal/v2/token``."""

    token: str
    expires_at: float
    """Seconds since the epoch."""


def parse_copilot_token(status: int, body: str) -> CopilotToken:
    """Read the Copilot token exchange answer (``{"token", "expires_at"}``)."""
    data = _json_object(body)
    if status >= 400 or data is None:
        raise OAuthError(f"Copilot token request failed ({status}): {error_of(data) or _shown(body) or 'no body'}")
    token = _token(data, "token", "Copilot token request")
    expires = _seconds(data, "expires_at", cap=float(2**40))
    if token is None or expires is None:
        raise OAuthError("Invalid Copilot token response fields")
    secrets.register(token, "oauth:github-copilot:access")
    return CopilotToken(token, expires)


@dataclass(frozen=True)
class DeviceCode:
    """A device authorization response (RFC 8628 §3.2)."""

    device_code: str
    user_code: str
    verification_uri: str
    expires_in: float
    interval: float | None


def parse_device_code_response(status: int, body: str) -> DeviceCode:
    """Read the device authorization answer; the verification URI must be http(s)."""
    data = _json_object(body)
    if status >= 400 or data is None:
        raise OAuthError(f"Device code request failed ({status}): {error_of(data) or _shown(body) or 'no body'}")
    device_code = _token(data, "device_code", "Device code request")
    user_code = _text(data, "user_code")
    uri = _text(data, "verification_uri") or _text(data, "verification_url")
    expires_in = _seconds(data, "expires_in", MAX_DEVICE_LIFETIME_S)
    if device_code is None or user_code is None or uri is None or expires_in is None:
        raise OAuthError("Invalid device code response fields")
    if len(user_code) > MAX_SHOWN_FIELD or len(uri) > MAX_SHOWN_FIELD or not user_code.isprintable():
        raise OAuthError("Invalid device code response fields")
    # The client opens this in a browser: never anything but a web URL.
    try:
        scheme = urllib.parse.urlsplit(uri).scheme
    except ValueError:
        scheme = ""
    if scheme not in ("http", "https"):
        raise OAuthError("Untrusted verification_uri in device code response")
    secrets.register(device_code, "oauth:device_code")
    return DeviceCode(device_code, user_code, uri, expires_in, _seconds(data, "interval", MAX_POLL_INTERVAL_S))


@dataclass(frozen=True)
class DevicePoll:
    """One poll of the device token endpoint: ``status`` is complete, pending, slow_down or failed."""

    status: str
    token: TokenResponse | None = None
    interval: float | None = None
    message: str = ""


def parse_device_poll(status: int, body: str) -> DevicePoll:
    """Classify a device-token poll answer (RFC 8628 §3.5). GitHub answers errors with 200."""
    data = _json_object(body)
    if data is not None and _text(data, "access_token"):
        return DevicePoll("complete", token=parse_token_response(200, body, "Device token request"))
    error = data.get("error") if data is not None else None
    if error == "authorization_pending":
        return DevicePoll("pending")
    if error == "slow_down":
        return DevicePoll("slow_down", interval=_seconds(data or {}, "interval", MAX_POLL_INTERVAL_S))
    if isinstance(error, str) and error:
        return DevicePoll("failed", message=f"Device flow failed: {error_of(data)}")
    if status >= 400:
        return DevicePoll("failed", message=f"Device token request failed ({status}): {_shown(body) or 'no body'}")
    return DevicePoll("failed", message="Invalid device token response")


@dataclass(frozen=True)
class Callback:
    """The query of a redirect to the callback path."""

    code: str | None
    state: str | None
    error: str | None


def parse_callback_target(target: str, path: str) -> Callback | None:
    """The ``code``/``state``/``error`` of an HTTP request target (``/callback?code=…``) when its
    path is ``path``; None for any other path or an unreadable target."""
    try:
        parts = urllib.parse.urlsplit(target)
        query = urllib.parse.parse_qs(parts.query, keep_blank_values=True, max_num_fields=50)
    except ValueError:
        return None
    if parts.path != path:
        return None

    def one(name: str) -> str | None:
        values = query.get(name)
        return values[0] if values and values[0] else None

    error = one("error")
    if error and (description := one("error_description")):
        error = f"{error}: {description}"
    return Callback(one("code"), one("state"), error)


def parse_authorization_input(text: str) -> tuple[str | None, str | None]:
    """``(code, state)`` from what a user pasted: the redirect URL, ``code#state``, a query string
    (``code=…&state=…``) or the bare code."""
    value = text.strip()
    if not value:
        return None, None
    if "://" in value:
        try:
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(value).query, max_num_fields=50)
        except ValueError:
            return None, None
        return (query.get("code") or [None])[0], (query.get("state") or [None])[0]
    if "#" in value:
        code, _, state = value.partition("#")
        return code or None, state or None
    if "code=" in value:
        try:
            query = urllib.parse.parse_qs(value, max_num_fields=50)
        except ValueError:
            return None, None
        return (query.get("code") or [None])[0], (query.get("state") or [None])[0]
    return value, None


def jwt_claims(token: str) -> dict[str, Any]:
    """The payload of a JWT, unverified ({} when it is not one): used to read account ids."""
    parts = token.split(".")
    if len(parts) != 3:
        return {}
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        data = json.loads(base64.urlsafe_b64decode(payload.encode("ascii")))
    except (ValueError, UnicodeError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}
