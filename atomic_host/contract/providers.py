"""The provider contract: API implementations, provider catalogs and streaming options.

A provider plugin registers through the ``register_providers`` hook::

    @hookimpl
    def register_providers(register):
        register(ApiImpl(api="anthropic-messages", stream="builtin_plugins.providers.anthropic:stream"))
        register(ProviderInfo(id="anthropic", name="Anthropic", api="anthropic-messages",
                              base_url="https://api.anthropic.com", env_keys=["ANTHROPIC_API_KEY"],
                              models=[{...Model dict...}], preferred_models=["claude-sonnet-4-6"]))

Everything the host knows about a provider comes from these declarations: which environment
variables hold its key (``env_keys``: resolved in that order, and masked in everything the host
writes), which of its models to pick when the user chose none (``preferred_models``), whether it
needs a key at all, and whether its API talks HTTP (``ApiImpl.needs_http``).

``stream(model, context, options)`` is an async generator of event dicts (the neutral event model of
providers.md: ``start``, ``text_start``/``text_delta``/``text_end``, ``thinking_*``, ``toolcall_*``,
``done``, ``error``). Every event carries ``"partial"``: the assistant message dict being built (the
same object each time, with a running ``usage``). Exactly one terminal event (``done`` with
``message``, or ``error`` with ``error`` = the final message, ``stopReason`` "error" or "aborted").
Once called, a stream never raises: every failure becomes an ``error`` event.

``context`` is ``{"systemPrompt": str | None, "messages": [user/assistant/toolResult dicts],
"tools": [{"name", "description", "parameters"}]}``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

from atomic_host.contract.records import field, record

Event = dict[str, Any]
StreamFn = Callable[[dict[str, Any], dict[str, Any], "StreamOptions"], AsyncIterator[Event]]


@record
class StreamOptions:
    """Neutral options for one provider request."""

    api_key: str | None = None
    reasoning: str | None = None
    """Thinking level (minimal..max); None = off / not sent."""
    thinking_budgets: dict[str, int] | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    signal: asyncio.Event | None = None
    """Set to abort: the stream ends with an ``error`` event, reason ``aborted``."""
    session_id: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    timeout_s: float | None = None
    stream_deadline_s: float = 300.0
    """Longest silence between two stream events before the request fails."""
    max_line_bytes: int = 32 * 1024 * 1024
    """Longest stream line (or event) accepted, decompressed: a longer one fails the request
    instead of growing memory without end (a gzip bomb, a line that never ends)."""
    max_retries: int = 0
    max_retry_delay_ms: int = 60000
    cache_retention: str = "short"
    http_client: Any = None
    """Optional shared ``httpx.AsyncClient``."""
    provider_hooks: ProviderHooks | None = None
    """Set by the host when a plugin implements ``before_provider_request``,
    ``before_provider_headers`` or ``after_provider_response``; adapters built on
    ``atomic_host.kit.llm.http.drive`` call it (None: nothing to call)."""


class ProviderHooks(Protocol):
    """The provider hooks of one request, as :func:`atomic_host.kit.llm.http.drive` calls them."""

    async def before_request(self, url: str, payload: dict[str, Any]) -> dict[str, Any]:
        """The body to send (``before_provider_request``)."""
        ...

    async def before_headers(self, url: str, headers: dict[str, str]) -> dict[str, str]:
        """The headers to send (``before_provider_headers``)."""
        ...

    async def after_response(
        self, url: str, status: int, headers: Mapping[str, str], elapsed_ms: float, attempt: int
    ) -> None:
        """A response head arrived (``after_provider_response``)."""
        ...


@record
class ApiImpl:
    """One wire API implementation (``model["api"]`` selects it)."""

    api: str
    stream: StreamFn | str
    plugin: str = ""
    needs_http: bool = True
    """The stream talks HTTP: requests get the host's shared ``httpx.AsyncClient`` as
    ``StreamOptions.http_client``. False for in-process APIs (the scripted ``faux``), which then get
    None and never make the host build a client."""


class LoginCancelled(Exception):
    """The user (or ``cancel_login_provider``) ended a login before it finished."""


class LoginUI(Protocol):
    """How a login flow talks to the user (over RPC: ``oauth_*`` extension UI requests that carry
    the ``provider`` and ``loginId``). The notifications return at once; ``prompt``, ``select`` and
    ``manual_code`` wait for the user's answer and raise :class:`LoginCancelled` when they decline."""

    def auth_url(self, url: str, instructions: str | None = None) -> None:
        """Ask the user to open ``url`` in a browser."""

    def device_code(self, user_code: str, verification_uri: str, interval_s: float | None = None,
                    expires_in_s: float | None = None) -> None:
        """Ask the user to enter ``user_code`` at ``verification_uri``."""

    def progress(self, message: str) -> None:
        """A step of the flow, e.g. "Exchanging authorization code for tokens..."."""

    def info(self, message: str, links: Sequence[tuple[str, str | None]] = ()) -> None:
        """A notice with optional ``(url, label)`` links."""

    async def prompt(self, message: str, placeholder: str | None = None) -> str:
        """A line of text from the user (may be empty)."""
        ...

    async def select(self, message: str, options: Sequence[tuple[str, str]]) -> str:
        """The id of the chosen ``(id, label)`` option."""
        ...

    async def manual_code(self, message: str | None = None) -> str:
        """An authorization code or redirect URL pasted by the user; raced against a callback
        server by the flows that have one (cancel the await when the callback wins)."""
        ...

    def manual_code_cancel(self) -> None:
        """Withdraw a pending ``manual_code`` request (the browser callback won)."""


class OAuthFlow(Protocol):
    """A provider's OAuth implementation. Credentials are the ``auth.json`` record without its
    ``type``: ``{"access", "refresh", "expires" (ms since the epoch), ...extra fields}``.
    ``endpoints`` holds the configured overrides (``ATOMIC_OAUTH_<PROVIDER>_<KEY>`` variables,
    keys in camelCase: ``tokenUrl``, ``authorizeUrl``, ...); a flow falls back to the real ones."""

    async def login(self, ui: LoginUI, endpoints: Mapping[str, str]) -> dict[str, Any]:
        """Run the sign-in and return the new credential."""
        ...

    async def refresh(self, credential: dict[str, Any], endpoints: Mapping[str, str]) -> dict[str, Any]:
        """Exchange the refresh token; raise on failure (the stored credential stays)."""
        ...

    def request_auth(self, credential: dict[str, Any]) -> dict[str, Any]:
        """What a request needs from a valid credential: ``{"apiKey", "baseUrl"?, "headers"?}``."""
        ...


@record
class OAuthLogin:
    """A provider's OAuth sign-in, declared on :attr:`ProviderInfo.oauth`. ``flow`` is an
    :class:`OAuthFlow` or a ``"module:attribute"`` string naming one; the string form is imported
    only when a login or a token refresh runs, so declaring a login costs nothing at startup."""

    name: str
    """Shown in ``oauthProviders``, e.g. "GitHub Copilot"."""
    flow: Any
    login_label: str | None = None
    uses_callback_server: bool = False
    """The flow listens on a localhost port for the browser's redirect."""


@record
class CatalogRequest:
    """What a provider's ``refresh_models`` gets: where to ask, with which credential."""

    provider: str
    base_url: str
    api_key: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


@record
class ProviderInfo:
    """A provider and its model catalog.

    ``oauth`` declares a sign-in: an extension adds one to its own provider, or to a built-in one by
    registering that provider again (a registration replaces an earlier one with the same id)
    with its models and ``oauth=OAuthLogin(...)``."""

    id: str
    name: str
    api: str
    base_url: str = ""
    env_keys: list[str] = field(default_factory=list)
    """Environment variables holding an API key, in priority order. Their values are masked in
    everything the host writes (names ending in ``_API_KEY`` or ``_TOKEN`` from the first byte,
    others once the plugin has registered)."""
    models: list[dict[str, Any]] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    compat: dict[str, Any] = field(default_factory=dict)
    """Provider-level ``compat``: models added under this id in models.json inherit it."""
    always_authenticated: bool = False
    """True for providers that need no key (faux, keyless local servers)."""
    plugin: str = ""
    oauth: OAuthLogin | None = None
    """The provider's OAuth sign-in (``login_provider`` with ``authType: "oauth"``), if it has one."""
    background_summaries: bool = True
    """Whether the host asks this provider's models for background session summaries when
    ``sessionSummary.enabled`` is unset (True or False in settings decides alone). False for the
    scripted faux provider: its replies belong to the test that scripted them."""
    secret_env: list[str] = field(default_factory=list)
    """Other environment variables holding credentials of this provider that are not its API key
    (e.g. a gateway's bearer token): masked like ``env_keys``, never sent as the key."""
    preferred_models: list[str] = field(default_factory=list)
    """Ids of this provider's models to pick, in order, when the user chose no model: the first
    one that is available wins. Providers are tried in registration order (built-ins first); when
    no provider's preferred model is available, the first available model of a provider that is not
    ``scripted`` is the default."""
    scripted: bool = False
    """Replays scripted replies (tests, demos) instead of calling a model: never picked as the
    default model, and LLM-written summaries are off for it unless enabled."""
    refresh_models: Callable[[CatalogRequest], Awaitable[list[dict[str, Any]]]] | str | None = None
    """A dynamic catalog (a server that lists its models, e.g. ``GET /v1/models``):
    ``await refresh_models(CatalogRequest)`` returns the provider's current models (model dicts as
    in ``models``, at least ``id``), or raises. Called by the ``refresh_models`` command when it may
    use the network; its answer is kept beside ``models`` (same id: the fetched one wins) until the
    next successful fetch. A ``"module:function"`` string is imported on first use."""
