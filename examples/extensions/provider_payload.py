"""Example local extension, after upstream's ``provider-payload.ts``: every provider request gets a
header and a ``max_tokens`` cap, and each response's status, rate-limit headers and latency are
recorded in the session.

Try it::

    atomic --mode rpc -e examples/extensions/provider_payload.py

Settings (``~/.atomic/agent/settings.json``), all optional::

    {"providerPayload": {"maxTokens": 4096, "header": "x-team", "value": "atomic"}}

``/provider-stats`` shows what the responses so far looked like.
"""

from __future__ import annotations

from typing import Any

from atomic_host import SlashCommand, hookimpl

DEFAULTS = {"maxTokens": 4096, "header": "x-atomic-extension", "value": "provider-payload"}
TOKEN_FIELDS = ("max_tokens", "max_completion_tokens", "max_output_tokens")
"""Where each wire API puts the output limit: Anthropic/OpenAI chat, newer OpenAI chat, Responses."""

_responses: list[dict[str, Any]] = []


def _config(api: Any) -> dict[str, Any]:
    own = api.settings.get("providerPayload")
    return {**DEFAULTS, **(own if isinstance(own, dict) else {})}


@hookimpl
def before_provider_request(event: Any, api: Any) -> None:
    cap = int(_config(api)["maxTokens"])
    for name in TOKEN_FIELDS:
        if isinstance(event.payload.get(name), int):
            event.payload[name] = min(event.payload[name], cap)
    generation = event.payload.get("generationConfig")  # Google Gemini
    if isinstance(generation, dict) and isinstance(generation.get("maxOutputTokens"), int):
        generation["maxOutputTokens"] = min(generation["maxOutputTokens"], cap)


@hookimpl
def before_provider_headers(event: Any, api: Any) -> None:
    config = _config(api)
    event.headers[str(config["header"]).lower()] = str(config["value"])


@hookimpl
def after_provider_response(event: Any, api: Any) -> None:
    limits = {k: v for k, v in event.headers.items() if "ratelimit" in k or k == "retry-after"}
    record = {"status": event.status, "ms": event.elapsed_ms, "model": event.model.get("id"), "limits": limits}
    _responses.append(record)
    if event.status >= 400:
        api.append_entry("provider-response", record)


def provider_stats(args: str, api: Any) -> None:
    if not _responses:
        api.ui.notify("no provider responses yet")
        return
    statuses = ", ".join(str(r["status"]) for r in _responses[-10:])
    slowest = max(r["ms"] for r in _responses)
    api.ui.notify(f"{len(_responses)} responses (last: {statuses}); slowest head {slowest:.0f} ms")


@hookimpl
def register_commands(register: Any) -> None:
    register(SlashCommand(name="provider-stats", handler=provider_stats, description="Provider responses so far"))
