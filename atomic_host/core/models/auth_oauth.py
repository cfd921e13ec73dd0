"""OAuth credentials at request time: refresh before they expire and once on a 401.

:func:`oauth_stream` wraps a provider's stream function. For a provider whose credential in
``auth.json`` is an OAuth record (and no ``--api-key`` overrides it) it

1. refreshes the token when less than :data:`REFRESH_MARGIN_MS` of its life is left, under an
   exclusive lock on ``auth.json.lock`` (so two hosts never spend the same refresh token) and an
   in-process lock per provider; the record is re-read under the lock, so a token another process
   refreshed meanwhile is used as is;
2. applies the flow's ``request_auth`` (API key, and for some providers a base URL and headers);
3. when the response is a 401 before anything streamed, refreshes once (``force``: unless another
   request already replaced the rejected token) and retries the request once with the new token;
   when that refresh fails, the 401 is the request's error, with the refresh failure added.

A refresh that fails ends the request with one ``error`` event that names the provider, gives the
server's reason and says to log in again. The stored credential is kept, whatever the server said
(``invalid_grant`` included): pi does the same (``AuthStorage.getApiKey``: "credentials preserved for
retry"), a 5xx or a network failure says nothing about the grant, and deleting on ``invalid_grant``
would only turn the clear "log in again" into "no API key". A new login replaces the record;
``logout_provider`` removes it.

A flow may also define ``context_headers(context) -> dict``: headers that depend on the request's
messages (GitHub Copilot's ``X-Initiator``), applied after ``request_auth``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import fcntl
import importlib
import os
import time
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

from atomic_host.contract.providers import OAuthLogin, StreamOptions
from atomic_host.core.models.auth_store import read_auth, write_auth
from atomic_host.kit import secrets

ModelRegistry = Any
"""The :class:`~atomic_host.core.models.registry.ModelRegistry` (not imported: it imports this module)."""

REFRESH_MARGIN_MS = 5 * 60 * 1000
"""Refresh when less than this much of the access token's life is left (providers.md §2)."""
LOCK_TIMEOUT_S = 30.0
ENV_PREFIX = "ATOMIC_OAUTH_"

_locks: dict[str, asyncio.Lock] = {}


def resolve_flow(login: OAuthLogin) -> Any:
    """The flow object of ``login`` (imports a ``"module:attribute"`` string on first use)."""
    flow = login.flow
    if isinstance(flow, str):
        module, _, name = flow.partition(":")
        flow = getattr(importlib.import_module(module), name)
    return flow


def endpoint_overrides(provider: str, env: Mapping[str, str]) -> dict[str, str]:
    """``ATOMIC_OAUTH_<PROVIDER>_<KEY>`` variables as ``{camelCaseKey: value}`` (``-`` in the provider
    id is ``_``): ``ATOMIC_OAUTH_GITHUB_COPILOT_DEVICE_CODE_URL`` → ``deviceCodeUrl``."""
    prefix = f"{ENV_PREFIX}{provider.upper().replace('-', '_')}_"
    out: dict[str, str] = {}
    for name, value in env.items():
        if name.startswith(prefix) and value:
            first, *rest = name[len(prefix):].lower().split("_")
            out[first + "".join(part.title() for part in rest)] = value
    return out


def is_fresh(record: Mapping[str, Any], now_ms: float | None = None) -> bool:
    """The access token has more than the refresh margin left (a record without ``expires`` is fresh)."""
    expires = record.get("expires")
    if isinstance(expires, bool) or not isinstance(expires, int | float):
        return True
    now = time.time() * 1000 if now_ms is None else now_ms
    return expires - now > REFRESH_MARGIN_MS


def register_record(provider: str, record: Mapping[str, Any]) -> None:
    """Register every string of an OAuth record except its type and expiry as a secret."""
    for key, value in record.items():
        if key not in ("type", "expires", "enterpriseUrl") and isinstance(value, str):
            secrets.register(value, f"auth.json:{provider}:{key}")


@contextlib.asynccontextmanager
async def auth_file_lock(auth_path: Path) -> AsyncIterator[None]:
    """An exclusive ``flock`` on ``<auth.json>.lock``, polled without blocking the event loop."""
    auth_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(f"{auth_path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + LOCK_TIMEOUT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"auth.json is locked by another process ({auth_path}.lock)") from None
                await asyncio.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


async def fresh_credential(reg: ModelRegistry, provider: str, *, force: bool = False,
                           rejected: str | None = None) -> dict[str, Any]:
    """The provider's stored OAuth record, refreshed first when it is about to expire (or, with
    ``force``, when its access token is still ``rejected``). Raises when there is none or the
    refresh fails."""
    login = reg.oauth_login(provider)
    if login is None:
        raise ValueError(f"{provider} has no OAuth login")
    lock = _locks.setdefault(provider, asyncio.Lock())
    async with lock:
        record = reg.stored_record(provider)
        if _usable(record, force, rejected):
            return dict(record or {})
        async with auth_file_lock(reg.auth_path):
            reg.reload_auth()  # another process may have refreshed it meanwhile
            record = reg.stored_record(provider)
            if not isinstance(record, dict) or record.get("type") != "oauth":
                raise ValueError(f"No OAuth credential stored for {provider}")
            if _usable(record, force, rejected):
                return dict(record)
            flow = resolve_flow(login)
            current = {k: v for k, v in record.items() if k != "type"}
            new = await flow.refresh(current, endpoint_overrides(provider, reg.env))
            stored = {"type": "oauth", **new}
            register_record(provider, stored)
            data = read_auth(reg.auth_path)
            data[provider] = stored
            write_auth(reg.auth_path, data)
            reg.reload_auth()
            return stored


def _usable(record: Any, force: bool, rejected: str | None) -> bool:
    if not isinstance(record, dict) or record.get("type") != "oauth":
        return False
    if force:
        return record.get("access") != rejected
    return is_fresh(record)


def _with_auth(flow: Any, record: Mapping[str, Any], model: dict[str, Any], context: Mapping[str, Any],
               options: StreamOptions) -> tuple[dict[str, Any], StreamOptions]:
    auth = flow.request_auth({k: v for k, v in record.items() if k != "type"})
    opts = copy.copy(options)
    opts.api_key = auth.get("apiKey") or options.api_key
    dynamic = getattr(flow, "context_headers", None)
    opts.headers = {**options.headers, **(auth.get("headers") or {}), **(dynamic(context) if dynamic else {})}
    if auth.get("baseUrl"):
        secrets.register_url(auth["baseUrl"], f"baseUrl:{model.get('provider', '')}")
        model = {**model, "baseUrl": auth["baseUrl"]}
    return model, opts


def _unauthorized(event: Mapping[str, Any]) -> bool:
    message = event.get("error") or {}
    return event.get("type") == "error" and str(message.get("errorMessage", "")).startswith("401")


def login_again(provider: str) -> str:
    """The advice that ends every refresh failure."""
    return (f"Log in to {provider} again (login_provider with authType \"oauth\", or `atomic login {provider}`); "
            "the stored credential was kept.")


def refresh_failure(provider: str, exc: BaseException) -> str:
    """``OAuth token refresh failed for <provider>: <reason>. Log in to <provider> again …``."""
    detail = (str(exc) or type(exc).__name__).rstrip(".")
    return f"OAuth token refresh failed for {provider}: {detail}. {login_again(provider)}"


def _failure(model: dict[str, Any], provider: str, exc: BaseException) -> dict[str, Any]:
    # lazy: the stream module loads with the first model request, not with a login (startup_imports)
    from atomic_host.kit.llm.stream import AssistantStream

    return AssistantStream(model).error(refresh_failure(provider, exc))


def _rejected_and_failed(rejected: dict[str, Any], provider: str, exc: BaseException) -> dict[str, Any]:
    """The server's 401 event, its message extended with the failed refresh (still starts "401")."""
    event = copy.deepcopy(rejected)
    done: set[int] = set()
    for key in ("error", "partial"):
        message = event.get(key)
        if isinstance(message, dict) and id(message) not in done:  # the two are often one dict
            done.add(id(message))
            first = str(message.get("errorMessage") or "401").rstrip(".")
            message["errorMessage"] = secrets.mask(f"{first}. {refresh_failure(provider, exc)}")
    return event


def oauth_stream(reg: ModelRegistry, fn: Callable[..., AsyncIterator[dict[str, Any]]]) -> Any:
    """``fn`` with OAuth refresh and the one retry on a 401 (see the module docstring)."""

    def stream(model: dict[str, Any], context: dict[str, Any], options: StreamOptions) -> AsyncIterator[dict[str, Any]]:
        provider = str(model.get("provider", ""))
        login = reg.oauth_login(provider)
        if login is None or not reg.uses_stored_oauth(provider):
            return fn(model, context, options)  # the provider's own stream: no generator passing each event on
        return with_oauth(model, context, options, provider, login)

    async def with_oauth(model: dict[str, Any], context: dict[str, Any], options: StreamOptions, provider: str,
                         login: Any) -> AsyncIterator[dict[str, Any]]:
        try:
            record = await fresh_credential(reg, provider)
            flow = resolve_flow(login)
        except Exception as exc:
            yield _failure(model, provider, exc)
            return
        for attempt in (1, 2):
            try:
                request_model, request_options = _with_auth(flow, record, model, context, options)
            except Exception as exc:  # an extension's request_auth/context_headers raised: end this request only
                # lazy: the stream module loads with the first model request, not with a login (startup_imports)
                from atomic_host.kit.llm.stream import AssistantStream

                yield AssistantStream(model).error(f"The {provider} OAuth login cannot authorize the request: "
                                                   f"{exc or type(exc).__name__}")
                return
            rejected: dict[str, Any] | None = None
            async with contextlib.aclosing(fn(request_model, context, request_options)) as events:
                first = True
                async for event in events:
                    if first and attempt == 1 and _unauthorized(event):
                        rejected = event
                        break
                    first = False
                    yield event
            if rejected is None:
                return
            try:
                record = await fresh_credential(reg, provider, force=True, rejected=str(record.get("access")))
            except Exception as exc:
                yield _rejected_and_failed(rejected, provider, exc)  # the 401 is the answer, and why it stays
                return

    return stream
