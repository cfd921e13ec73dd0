"""The ``openai-codex-responses`` wire API: the Responses API as the ChatGPT Codex backend takes it.

The shape is pi's (``packages/ai/src/providers/openai-codex-responses.ts``, pi-mono 83378aa), which
signs in with the same client id:

- ``POST {baseUrl}/codex/responses`` (a base that already ends in ``/codex`` or ``/codex/responses``
  is used as is), SSE only;
- the system prompt goes in ``instructions``, not in ``input`` (the backend requires it there);
- ``store: false``, ``stream: true``, no ``max_output_tokens`` (the backend rejects it),
  ``text.verbosity``, ``include: ["reasoning.encrypted_content"]``, ``tool_choice: "auto"``,
  ``parallel_tool_calls: true``, tools with ``strict: null``, ``prompt_cache_key`` = the session id;
  ``reasoning`` only when a thinking level is on;
- headers: ``Authorization: Bearer <ChatGPT access token>``, ``chatgpt-account-id``,
  ``originator``, ``OpenAI-Beta: responses=experimental`` (from the flow's ``request_auth``), and
  here ``accept: text/event-stream`` and ``session_id``.

Events are the Responses API's, plus ``response.done`` for ``response.completed``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from atomic_host.contract.providers import StreamOptions
from atomic_host.kit.llm.http import drive
from atomic_host.kit.llm.stream import Event
from builtin_plugins.providers.openai_responses import ResponsesParser

API = "openai-codex-responses"
DEFAULT_BASE_URL = "https://chatgpt.com/backend-api"


def codex_url(base_url: str | None) -> str:
    """The responses endpoint under ``base_url``, resolved as pi resolves it."""
    base = (base_url or "").strip().rstrip("/") or DEFAULT_BASE_URL
    if base.endswith("/codex/responses"):
        return base
    if base.endswith("/codex"):
        return f"{base}/responses"
    return f"{base}/codex/responses"


class CodexResponsesParser(ResponsesParser):
    """:class:`ResponsesParser` with the Codex backend's request shape."""

    def request(self) -> tuple[str, dict[str, str], dict[str, Any]]:
        _url, headers, body = super().request()
        items = body.get("input") or []
        instructions = None
        if items and isinstance(items[0], dict) and items[0].get("role") in ("system", "developer"):
            instructions = items[0].get("content")
            items = items[1:]
        body["input"] = items
        body["instructions"] = instructions if isinstance(instructions, str) else ""
        body.pop("max_output_tokens", None)
        body["text"] = {"verbosity": "medium"}
        body["include"] = ["reasoning.encrypted_content"]
        body["tool_choice"] = "auto"
        body["parallel_tool_calls"] = True
        for tool in body.get("tools") or []:
            tool["strict"] = None
        reasoning = body.get("reasoning")
        if isinstance(reasoning, dict) and reasoning.get("effort") in (None, "none") and "summary" not in reasoning:
            del body["reasoning"]  # thinking off: leave the effort to the backend, as pi does
        headers["accept"] = "text/event-stream"
        if self.options.session_id:
            headers["session_id"] = self.options.session_id
        return codex_url(self.model.get("baseUrl")), headers, body

    def on_event(self, event: str, data: str) -> list[Event]:
        if event == "response.done" or (not event and "response.done" in data):
            payload = json.loads(data)
            if isinstance(payload, dict) and payload.get("type") in ("response.done", None):
                data = json.dumps({**payload, "type": "response.completed"})
                event = "response.completed"
        return super().on_event(event, data)


def stream(model: dict[str, Any], context: dict[str, Any], options: StreamOptions) -> AsyncIterator[Event]:
    """Stream one Codex backend request as neutral events (never raises); ``drive``'s own generator."""
    return drive(lambda: CodexResponsesParser(model, context, options), options)
