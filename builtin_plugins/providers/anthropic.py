"""anthropic-messages adapter: ``POST {baseUrl}/v1/messages`` with SSE, mapped to neutral events."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from atomic_host.contract.providers import StreamOptions
from atomic_host.kit.llm import event_json
from atomic_host.kit.llm.context import clamp_max_tokens, transform_messages
from atomic_host.kit.llm.http import WireParser, drive
from atomic_host.kit.llm.stream import AssistantStream, Event

API = "anthropic-messages"
DEFAULT_BASE_URL = "https://api.anthropic.com"
BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
ADAPTIVE_EFFORT = {"minimal": "low", "low": "low", "medium": "medium"}
CLAUDE_CODE_IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude."
CLAUDE_CODE_TOOLS = {
    name.lower(): name
    for name in (
        "Read", "Write", "Edit", "Bash", "Grep", "Glob", "AskUserQuestion", "EnterPlanMode", "ExitPlanMode",
        "KillShell", "NotebookEdit", "Skill", "Task", "TaskOutput", "TodoWrite", "WebFetch", "WebSearch",
    )
}  # fmt: skip
"""Claude Code's tool names by their lower case. A Claude subscription (OAuth) token is for Claude
Code: requests made with one name tools as Claude Code does (``bash`` goes out as ``Bash``) and the
names in the reply map back to ours, as pi does (pi-mono ``packages/ai/src/providers/anthropic.ts``,
"Claude Code 2.x tool names")."""


def claude_code_name(name: str) -> str:
    """``name`` in Claude Code's casing when Claude Code has a tool of that name, else as it is."""
    return CLAUDE_CODE_TOOLS.get(name.lower(), name)
REFUSAL_MESSAGE = "The model refused to complete the request"

STOP_REASONS = {
    "end_turn": "stop",
    "pause_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "toolUse",
}


def _compat(model: dict[str, Any], key: str, default: Any) -> Any:
    value = (model.get("compat") or {}).get(key)
    return default if value is None else value


def _cache_control(model: dict[str, Any], options: StreamOptions) -> dict[str, Any] | None:
    if options.cache_retention == "none":
        return None
    if options.cache_retention == "long" and _compat(model, "supportsLongCacheRetention", True):
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def _user_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for b in content or []:
        if b.get("type") == "text" and b.get("text"):
            blocks.append({"type": "text", "text": b["text"]})
        elif b.get("type") == "image":
            source = {
                "type": "base64",
                "media_type": b.get("mimeType", "image/png"),
                "data": b.get("data", ""),
            }
            blocks.append({"type": "image", "source": source})
    return blocks


def _assistant_blocks(msg: dict[str, Any], tool_name: Callable[[str], str]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for b in msg.get("content") or []:
        kind = b.get("type")
        if kind == "text" and (b.get("text") or "").strip():
            # Anthropic rejects whitespace-only text blocks; adaptive thinking streams one ("\n\n")
            # before the thinking block.
            blocks.append({"type": "text", "text": b["text"]})
        elif kind == "thinking":
            signature = b.get("thinkingSignature") or ""
            if b.get("redacted"):
                if signature:
                    blocks.append({"type": "redacted_thinking", "data": signature})
            elif not signature:
                # Anthropic rejects unsigned thinking; keep what the model thought as text.
                if (b.get("thinking") or "").strip():
                    blocks.append({"type": "text", "text": b["thinking"]})
            else:
                blocks.append({"type": "thinking", "thinking": b.get("thinking", ""), "signature": signature})
        elif kind == "toolCall":
            blocks.append(
                {"type": "tool_use", "id": b["id"], "name": tool_name(b["name"]), "input": b.get("arguments") or {}}
            )
    return blocks


def _tool_result_block(msg: dict[str, Any]) -> dict[str, Any]:
    content = _user_blocks(msg.get("content"))
    return {
        "type": "tool_result",
        "tool_use_id": msg.get("toolCallId", ""),
        "content": content or [{"type": "text", "text": "(no output)"}],
        "is_error": bool(msg.get("isError")),
    }


def convert_messages(
    messages: list[dict[str, Any]],
    model: dict[str, Any],
    cache: dict[str, Any] | None,
    tool_name: Callable[[str], str] = str,
) -> list[dict[str, Any]]:
    """Neutral messages → Anthropic ``messages`` (tool results merged into user turns); ``tool_name``
    renames the tools of earlier calls (:func:`claude_code_name` for a subscription token)."""
    out: list[dict[str, Any]] = []
    for msg in transform_messages(messages, model):
        role = msg.get("role")
        if role == "user":
            blocks = _user_blocks(msg.get("content"))
            if blocks:
                out.append({"role": "user", "content": blocks})
        elif role == "assistant":
            blocks = _assistant_blocks(msg, tool_name)
            if blocks:
                out.append({"role": "assistant", "content": blocks})
        elif role == "toolResult":
            block = _tool_result_block(msg)
            last = out[-1] if out else None
            if last and last["role"] == "user" and all(b["type"] == "tool_result" for b in last["content"]):
                last["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
    if cache is not None:
        for msg in reversed(out):
            if msg["role"] == "user" and msg["content"]:
                msg["content"][-1] = {**msg["content"][-1], "cache_control": cache}
                break
    return out


class AnthropicParser(WireParser):
    """Request building and SSE mapping for one Messages API call."""

    def __init__(self, model: dict[str, Any], context: dict[str, Any], options: StreamOptions) -> None:
        super().__init__(AssistantStream(model, api=API))
        self.model, self.context, self.options = model, context, options
        self.blocks: dict[int, int] = {}  # provider block index → our contentIndex
        self.stop_reason: str | None = None
        self.stop_details: dict[str, Any] | None = None
        self.tool_names: dict[str, str] = {}
        """For a subscription token: lower-cased name → our tool name, to map Claude Code's back."""

    # -- request ------------------------------------------------------------------------------------
    def request(self) -> tuple[str, dict[str, str], dict[str, Any]]:
        model, options = self.model, self.options
        key = options.api_key or ""
        oauth = "sk-ant-oat" in key
        betas: list[str] = []
        headers = {
            "anthropic-version": "2023-06-01",
            "content-type": "application/json",
            "accept": "text/event-stream",
        }
        if oauth:
            headers["authorization"] = f"Bearer {key}"
            betas += ["claude-code-20250219", "oauth-2025-04-20"]
            headers["user-agent"] = "claude-cli/1.0.0 (external, cli)"
            headers["x-app"] = "cli"
        elif key:
            headers["x-api-key"] = key
        cache = _cache_control(model, options)
        body: dict[str, Any] = {
            "model": model["id"],
            "messages": convert_messages(
                self.context.get("messages") or [], model, cache, claude_code_name if oauth else str
            ),
            "stream": True,
        }
        system: list[dict[str, Any]] = []
        if oauth:
            system.append({"type": "text", "text": CLAUDE_CODE_IDENTITY})
        if self.context.get("systemPrompt"):
            system.append({"type": "text", "text": self.context["systemPrompt"]})
        if system:
            if cache is not None:
                system[-1]["cache_control"] = cache
            body["system"] = system
        tools = self.context.get("tools") or []
        if tools:
            eager = _compat(model, "supportsEagerToolInputStreaming", True)
            if oauth:
                self.tool_names = {t["name"].lower(): t["name"] for t in tools}
            body["tools"] = [
                {
                    "name": claude_code_name(t["name"]) if oauth else t["name"],
                    "description": t.get("description", ""),
                    "input_schema": t.get("parameters") or {"type": "object", "properties": {}},
                    **({"eager_input_streaming": True} if eager else {}),
                }
                for t in tools
            ]
            if not eager:
                betas.append("fine-grained-tool-streaming-2025-05-14")
        max_tokens = clamp_max_tokens(model, self.context, options.max_tokens)
        thinking = self._thinking(max_tokens, betas)
        if thinking is not None:
            body.update(thinking)
        body["max_tokens"] = body.pop("_max_tokens", max_tokens)
        thinking_on = body.get("thinking", {}).get("type") in ("enabled", "adaptive")
        if (
            options.temperature is not None
            and not thinking_on
            and _compat(model, "supportsTemperature", True)
        ):
            body["temperature"] = options.temperature
        if betas:
            headers["anthropic-beta"] = ",".join(betas)
        headers.update(self.model.get("headers") or {})
        headers.update(options.headers)
        base = (model.get("baseUrl") or DEFAULT_BASE_URL).rstrip("/")
        return f"{base}/v1/messages", headers, body

    def _thinking(self, max_tokens: int, betas: list[str]) -> dict[str, Any] | None:
        model, level = self.model, self.options.reasoning
        if not model.get("reasoning"):
            return None
        level_map = model.get("thinkingLevelMap") or {}
        if level is None or level == "off":
            if "off" in level_map and level_map["off"] is None:
                return None
            return {"thinking": {"type": "disabled"}}
        if _compat(model, "forceAdaptiveThinking", False):
            mapped = level_map.get(level)
            effort = mapped if isinstance(mapped, str) else ADAPTIVE_EFFORT.get(level, "high")
            return {
                "thinking": {"type": "adaptive", "display": "summarized"},
                "output_config": {"effort": effort},
            }
        budgets = {**BUDGETS, **(self.options.thinking_budgets or {})}
        budget = budgets.get(level if level in BUDGETS else "high", BUDGETS["high"])
        total = min(max_tokens + budget, int(model.get("maxTokens") or max_tokens + budget))
        sent = min(budget, total - 1024)
        if sent <= 0:
            sent = 1024
        betas.append("interleaved-thinking-2025-05-14")
        return {
            "thinking": {"type": "enabled", "budget_tokens": sent, "display": "summarized"},
            "_max_tokens": total,
        }

    # -- response -----------------------------------------------------------------------------------
    def _usage(self, usage: Any) -> None:
        if not usage:
            return
        out = self.out
        count = out.usage_fields(usage).count
        out.set_usage(
            input=count("input_tokens"),
            output=count("output_tokens"),
            cacheRead=count("cache_read_input_tokens"),
            cacheWrite=count("cache_creation_input_tokens"),
            cacheWrite1h=count("cache_creation", "ephemeral_1h_input_tokens"),
            reasoning=count("output_tokens_details", "thinking_tokens"),
        )
        totals = out.message["usage"]
        inp, cached = totals["input"], totals["cacheRead"] + totals["cacheWrite"]
        if inp and abs(cached - inp) <= 0.1 * inp:
            # Some gateways count the cached tokens inside input_tokens as well: the four-way sum
            # would count them twice (semantics §4.6), so the total is input + output.
            totals["totalTokens"] = inp + totals["output"]

    def on_event(self, event: str, data: str) -> list[Event]:
        out = self.out
        if event == "ping" or not data.strip():
            return []
        if event == "error":
            return [out.error(data.strip())]
        payload = event_json.loads(data)
        kind = payload.get("type", event)
        if kind == "error":  # the same error as a data-only frame (no ``event:`` line)
            return [out.error(data.strip())]
        if kind == "message_start":
            message = payload.get("message") or {}
            if message.get("id"):
                out.message["responseId"] = message["id"]
            if message.get("model") and message["model"] != self.model.get("id"):
                out.message["responseModel"] = message["model"]
            self._usage(message.get("usage"))
            return []
        if kind == "content_block_start":
            block = payload.get("content_block") or {}
            btype = block.get("type")
            if btype == "text":
                idx, ev = out.text_start()
                events = [ev]
                if block.get("text"):
                    events.append(out.text_delta(idx, block["text"]))
            elif btype == "thinking":
                idx, ev = out.thinking_start()
                events = [ev]
                if block.get("thinking"):
                    events.append(out.thinking_delta(idx, block["thinking"]))
            elif btype == "redacted_thinking":
                idx, ev = out.thinking_start()
                out.content[idx].update(redacted=True, thinkingSignature=block.get("data", ""))
                events = [ev, out.thinking_delta(idx, "[Reasoning redacted]")]
            elif btype in ("tool_use", "server_tool_use"):
                name = str(block.get("name", ""))
                idx, ev = out.toolcall_start(
                    block.get("id", ""), self.tool_names.get(name.lower(), name), block.get("input") or {}
                )
                events = [ev]
            else:
                return []
            self.blocks[payload.get("index", 0)] = idx
            return events
        if kind == "content_block_delta":
            idx = self.blocks.get(payload.get("index", 0))
            if idx is None:
                return []
            delta = payload.get("delta") or {}
            dtype = delta.get("type")
            if dtype == "text_delta":
                return [out.text_delta(idx, delta.get("text", ""))]
            if dtype == "thinking_delta":
                return [out.thinking_delta(idx, delta.get("thinking", ""))]
            if dtype == "signature_delta":
                block = out.content[idx]
                block["thinkingSignature"] = block.get("thinkingSignature", "") + delta.get("signature", "")
                return []
            if dtype == "input_json_delta":
                return [out.toolcall_delta(idx, delta.get("partial_json", ""))]
            return []
        if kind == "content_block_stop":
            idx = self.blocks.get(payload.get("index", 0))
            if idx is None or not out.is_open(idx):
                return []
            return [out.end_block(idx)]
        if kind == "message_delta":
            delta = payload.get("delta") or {}
            if delta.get("stop_reason"):
                self.stop_reason = delta["stop_reason"]
                self.stop_details = delta.get("stop_details")
                if self.stop_reason in STOP_REASONS:
                    # Anthropic says explicitly whether the model ended its turn: end_turn, or not
                    # (tool_use, pause_turn, max_tokens, stop_sequence).
                    out.message["endTurn"] = self.stop_reason == "end_turn"
            self._usage(payload.get("usage"))
            return []
        if kind == "message_stop":
            return [*out.end_open_blocks(), self._terminal()]
        return []

    def _terminal(self) -> Event:
        out, raw = self.out, self.stop_reason
        if raw is None:
            return out.error("Anthropic stream ended without a stop reason")
        if raw in STOP_REASONS:
            return out.done(STOP_REASONS[raw], raw=raw)
        if raw == "refusal":
            # Say that it is a refusal even when the explanation does not: clients show it, and a
            # refusal is never auto-retried (semantics §6.4).
            explanation = (self.stop_details or {}).get("explanation")
            message = REFUSAL_MESSAGE + (f": {explanation}" if explanation else "")
            return out.error(message, raw=raw)
        if raw == "sensitive":
            return out.error("Provider stopped with: sensitive", raw=raw)
        return out.error(f"Unhandled stop reason: {raw}", raw=raw)

    def finish(self) -> list[Event]:
        return [self.out.error("Anthropic stream ended before message_stop")]


def stream(model: dict[str, Any], context: dict[str, Any], options: StreamOptions) -> AsyncIterator[Event]:
    """Stream one Anthropic Messages request as neutral events (never raises). ``drive``'s own
    generator, which makes the parser when first read: no generator here yielding each event again."""
    return drive(lambda: AnthropicParser(model, context, options), options)
