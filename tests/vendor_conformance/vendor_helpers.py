"""Shared helpers of the vendor-conformance tests: fixture replies, models.json, event filters.

The fixtures under ``fixtures/`` are the project's own, written from what streams recorded from the
real Anthropic, OpenAI Chat Completions and OpenAI Responses APIs show (event names, nesting, error
objects, padding, framing). Replies are served by the tests' SSE server in 5-byte pieces, so UTF-8
characters and SSE frames are split across reads as they are on a real connection.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from atomic_host import testing_sse as sse

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
PIECE = 5
QUIET = {"sessionSummary": {"enabled": False}}  # no background summary request takes a queued reply
FAST_RETRY: dict[str, Any] = {"retry": {"enabled": True, "maxRetries": 3, "baseDelayMs": 50}, **QUIET}
NO_RETRY: dict[str, Any] = {"retry": {"enabled": False}, **QUIET}
APIS = {"anthropic": "anthropic-messages", "openai_chat": "openai-completions", "openai_responses": "openai-responses"}
CUT_OFF_CASES = [
    ("anthropic-messages", "anthropic/max_tokens_in_tool.sse", "anthropic/answer.sse", "max_tokens"),
    ("openai-completions", "openai_chat/length_in_tool_call.sse", "openai_chat/answer.sse", "length"),
    (
        "openai-responses",
        "openai_responses/incomplete_in_function_call.sse",
        "openai_responses/answer.sse",
        "incomplete.max_output_tokens",
    ),
]
"""(api, a reply cut off by the output limit inside a ``bash`` call that would ``touch ran-anyway``,
a plain answer "All done.", the raw stop reason of the cut)."""




def fixture(path: str) -> bytes:
    """The bytes of ``fixtures/<path>`` (``"anthropic/refusal.sse"``)."""
    return (FIXTURES / path).read_bytes()


def pieces(data: bytes, size: int = PIECE) -> list[bytes]:
    return sse.pieces(data, size)


def stream_reply(path: str, size: int = PIECE) -> Any:
    return sse.recorded_stream(FIXTURES / path, size)


def error_reply(status: int, path: str, headers: dict[str, str] | None = None) -> Any:
    return sse.recorded_error(status, FIXTURES / path, headers)


def models_json(base_url: str, api: str, **model: Any) -> str:
    """models.json with one provider ``vendor`` (model ``m1``, overridable fields) for ``api``."""
    entry = {"id": "m1", "reasoning": True, "contextWindow": 200000, "maxTokens": 32000, **model}
    entry.setdefault("cost", {"input": 1, "output": 2})
    provider = {"baseUrl": base_url, "api": api, "apiKey": "fixture-key-123", "models": [entry]}
    return json.dumps({"providers": {"vendor": provider}})


def write_models(agent_dir: Path, base_url: str, api: str, **model: Any) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(models_json(base_url, api, **model))


def of_type(events: list[dict[str, Any]], type_: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == type_]


def assistants(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Final assistant messages (``message_end``) in event order."""
    return [e["message"] for e in of_type(events, "message_end") if e["message"]["role"] == "assistant"]


def tool_results(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["message"] for e in of_type(events, "message_end") if e["message"]["role"] == "toolResult"]


def blocks(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [b for b in message.get("content") or [] if b.get("type") == kind]


def text_of(message: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in blocks(message, "text"))


def sent_tool_result(api: str, body: dict[str, Any]) -> tuple[str, str]:
    """(call id, text) of the one tool result a request body carried (Anthropic's is an error)."""
    if api == "anthropic-messages":
        (result,) = [b for m in body["messages"] for b in m["content"] if b.get("type") == "tool_result"]
        assert result["is_error"] is True
        return result["tool_use_id"], result["content"][0]["text"]
    if api == "openai-completions":
        (result,) = [m for m in body["messages"] if m["role"] == "tool"]
        return result["tool_call_id"], result["content"]
    (result,) = [i for i in body["input"] if i.get("type") == "function_call_output"]
    return result["call_id"], result["output"]
