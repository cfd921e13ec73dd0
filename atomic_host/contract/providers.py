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
from collections.abc import AsyncIterator, Callable
from typing import Any

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
    max_retries: int = 0
    max_retry_delay_ms: int = 60000
    cache_retention: str = "short"
    http_client: Any = None
    """Optional shared ``httpx.AsyncClient``."""


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


@record
class ProviderInfo:
    """A provider and its model catalog."""

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
