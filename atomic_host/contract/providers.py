"""The provider contract: API implementations, provider catalogs and streaming options.

A provider plugin registers through the ``register_providers`` hook::

    @hookimpl
    def register_providers(register):
        register(ApiImpl(api="anthropic-messages", stream="builtin_plugins.providers.anthropic:stream"))
        register(ProviderInfo(id="anthropic", name="Anthropic", api="anthropic-messages",
                              base_url="https://api.anthropic.com", env_keys=["ANTHROPIC_API_KEY"],
                              models=[{...Model dict...}]))

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


@record
class ProviderInfo:
    """A provider and its model catalog."""

    id: str
    name: str
    api: str
    base_url: str = ""
    env_keys: list[str] = field(default_factory=list)
    """Environment variables holding an API key, in priority order."""
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
