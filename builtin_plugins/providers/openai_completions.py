"""openai-completions adapter: ``POST {baseUrl}/chat/completions`` with SSE (OpenAI, llama.cpp, vLLM…)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from atomic_host.contract.providers import StreamOptions
from atomic_host.kit.llm import event_json
from atomic_host.kit.llm.context import clamp_max_tokens, text_of, transform_messages
from atomic_host.kit.llm.http import WireParser, bearer, drive, freeze_json, request_headers
from atomic_host.kit.llm.stream import AssistantStream, Event
from atomic_host.kit.llm.wire_errors import error_object_text

API = "openai-completions"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
FINISH_REASONS = {
    "stop": "stop",
    "end": "stop",
    "length": "length",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
}
PROMPT_FILTERED = "The provider's content filter blocked the prompt"
# Hosts whose Chat Completions lack store / developer role / reasoning_effort (pi-ai detectCompat).
_NON_STANDARD = ("deepseek", "x.ai", "mistral", "cerebras", "chutes", "z.ai", "bigmodel", "groq", "together")


def resolve_compat(model: dict[str, Any]) -> dict[str, Any]:
    """Model ``compat`` over defaults guessed from the provider id and base URL."""
    where = f"{model.get('provider', '')} {model.get('baseUrl', '')}".lower()
    odd = any(h in where for h in _NON_STANDARD)
    compat: dict[str, Any] = {
        "supportsStore": not odd,
        "supportsDeveloperRole": not odd,
        "supportsReasoningEffort": not odd or "groq" in where,
        "supportsUsageInStreaming": True,
        "supportsFinishReason": True,
        "maxTokensField": "max_tokens"
        if ("mistral" in where or "chutes" in where)
        else "max_completion_tokens",
        "requiresToolResultName": "mistral" in where,
        "requiresAssistantAfterToolResult": False,
        "requiresThinkingAsText": False,
        "thinkingFormat": "openrouter" if "openrouter" in where else "openai",
        "supportsStrictMode": True,
        "chatTemplateKwargs": None,
        "thinkingTokenBudgetField": None,
    }
    compat.update({k: v for k, v in (model.get("compat") or {}).items() if v is not None})
    return compat


def _user_content(content: Any, with_images: bool) -> Any:
    if isinstance(content, str):
        return content
    blocks = content or []
    if not any(b.get("type") == "image" for b in blocks) or not with_images:
        return text_of(blocks)
    parts: list[dict[str, Any]] = []
    for b in blocks:
        if b.get("type") == "text":
            parts.append({"type": "text", "text": b.get("text", "")})
        elif b.get("type") == "image":
            url = f"data:{b.get('mimeType', 'image/png')};base64,{b.get('data', '')}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def convert_messages(
    context: dict[str, Any], model: dict[str, Any], compat: dict[str, Any]
) -> list[dict[str, Any]]:
    """Neutral context → Chat Completions ``messages``."""
    with_images = "image" in (model.get("input") or ["text"])
    out: list[dict[str, Any]] = []
    if context.get("systemPrompt"):
        role = "developer" if model.get("reasoning") and compat["supportsDeveloperRole"] else "system"
        out.append({"role": role, "content": context["systemPrompt"]})
    pending_images: list[dict[str, Any]] = []

    def flush_images() -> None:
        if pending_images:
            out.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Attached image(s) from tool result:"},
                        *pending_images,
                    ],
                }
            )
            pending_images.clear()

    for msg in transform_messages(context.get("messages") or [], model):
        role = msg.get("role")
        if role != "toolResult":
            flush_images()
        if role == "user":
            if out and out[-1]["role"] == "tool" and compat["requiresAssistantAfterToolResult"]:
                out.append({"role": "assistant", "content": "I have processed the tool results."})
            out.append({"role": "user", "content": _user_content(msg.get("content"), with_images)})
        elif role == "assistant":
            entry: dict[str, Any] = {"role": "assistant"}
            texts: list[str] = []
            calls: list[dict[str, Any]] = []
            for b in msg.get("content") or []:
                kind = b.get("type")
                if kind == "text" and b.get("text"):
                    texts.append(b["text"])
                elif kind == "thinking" and b.get("thinking") and not b.get("redacted"):
                    sig = b.get("thinkingSignature")
                    if compat["requiresThinkingAsText"]:
                        texts.insert(0, b["thinking"])
                    elif sig in REASONING_FIELDS:
                        entry[sig] = entry.get(sig, "") + b["thinking"]
                elif kind == "toolCall":
                    calls.append(
                        {
                            "id": b["id"],
                            "type": "function",
                            "function": {
                                "name": b["name"],
                                "arguments": json.dumps(b.get("arguments") or {}),
                            },
                        }
                    )
            if not texts and not calls:
                continue
            entry["content"] = "".join(texts) if texts else None
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
        elif role == "toolResult":
            result: dict[str, Any] = {
                "role": "tool",
                "tool_call_id": msg.get("toolCallId", ""),
                "content": text_of(msg.get("content")) or "(no output)",
            }
            if compat["requiresToolResultName"]:
                result["name"] = msg.get("toolName", "")
            out.append(result)
            if with_images:
                pending_images.extend(
                    _user_content([b], True)[0] for b in msg.get("content") or [] if b.get("type") == "image"
                )
    flush_images()
    return out


def _reasoning_params(
    model: dict[str, Any], options: StreamOptions, compat: dict[str, Any]
) -> dict[str, Any]:
    if not model.get("reasoning"):
        return {}
    level = options.reasoning
    level_map = model.get("thinkingLevelMap") or {}
    on = level is not None and level != "off"
    fmt = compat["thinkingFormat"]
    params: dict[str, Any] = {}
    if fmt == "openai":
        if compat["supportsReasoningEffort"]:
            if on:
                mapped = level_map.get(level)
                params["reasoning_effort"] = mapped if isinstance(mapped, str) else level
            elif isinstance(level_map.get("off"), str):
                params["reasoning_effort"] = level_map["off"]
    elif fmt == "openrouter":
        if on:
            mapped = level_map.get(level)
            params["reasoning"] = {"effort": mapped if isinstance(mapped, str) else level}
    elif fmt in ("deepseek", "zai"):
        params["thinking"] = {"type": "enabled" if on else "disabled"}
    elif fmt == "qwen":
        params["enable_thinking"] = on
    elif fmt in ("chat-template", "qwen-chat-template"):
        params["chat_template_kwargs"] = {"enable_thinking": on, **(compat.get("chatTemplateKwargs") or {})}
    elif fmt == "together":
        params["reasoning"] = {"enabled": on}
    field = compat.get("thinkingTokenBudgetField")
    if field and on:
        budgets = {**BUDGETS, **(options.thinking_budgets or {})}
        budget = budgets.get(level if level in BUDGETS else "high", BUDGETS["high"])
        params[field] = max(1, budget - 1024)
    return params


class ChatParser(WireParser):
    """Request building and chunk mapping for one Chat Completions call."""

    def __init__(self, model: dict[str, Any], context: dict[str, Any], options: StreamOptions) -> None:
        super().__init__(AssistantStream(model, api=API))
        self.model, self.context, self.options = model, context, options
        self.compat = resolve_compat(model)
        self.current: int | None = None  # the open text/thinking/tool block receiving deltas
        self.tools: dict[Any, int] = {}  # tool-call key (index, else id) → contentIndex
        self.call_ids: dict[int, Any] = {}  # contentIndex → the id the server gave that call
        self.finish_reason: str | None = None
        self.reasoning_details: list[Any] = []
        self.filtered: dict[str, list[str]] = {}  # "prompt"/"response" → content-filter categories that fired

    def request(self) -> tuple[str, dict[str, str], dict[str, Any]]:
        model, options, compat = self.model, self.options, self.compat
        body: dict[str, Any] = {
            "model": model["id"],
            "messages": convert_messages(self.context, model, compat),
            "stream": True,
        }
        if compat["supportsUsageInStreaming"]:
            body["stream_options"] = {"include_usage": True}
        if compat["supportsStore"]:
            body["store"] = False
        body[compat["maxTokensField"]] = clamp_max_tokens(model, self.context, options.max_tokens)
        if options.temperature is not None:
            body["temperature"] = options.temperature
        tools = self.context.get("tools") or []
        if tools:
            body["tools"] = _tool_params(tools, bool(compat["supportsStrictMode"]))
        body.update(_reasoning_params(model, options, compat))
        if options.session_id and model.get("provider") == "openai":
            body["prompt_cache_key"] = options.session_id
        headers = request_headers(model, options, bearer(options))
        base = (model.get("baseUrl") or DEFAULT_BASE_URL).rstrip("/")
        return f"{base}/chat/completions", headers, body

    # -- response -----------------------------------------------------------------------------------
    def _usage(self, usage: Any) -> None:
        count = self.out.usage_fields(usage).count
        cache_read = next(
            (
                v
                for v in (
                    count("prompt_tokens_details", "cached_tokens"),
                    count("prompt_cache_hit_tokens"),
                    count("cached_tokens"),
                )
                if v is not None
            ),
            0,
        )
        cache_write = count("prompt_tokens_details", "cache_write_tokens") or 0
        prompt = count("prompt_tokens") or 0
        self.out.set_usage(
            input=max(0, prompt - cache_read - cache_write),
            output=count("completion_tokens") or 0,
            cacheRead=cache_read,
            cacheWrite=cache_write,
            reasoning=count("completion_tokens_details", "reasoning_tokens"),
        )

    def _note_filters(self, results: Any, where: str) -> None:
        """Remember the Azure content-filter categories marked ``filtered`` (for the error text)."""
        if not isinstance(results, list):
            return
        for result in results:
            filters = result.get("content_filter_results") if isinstance(result, dict) else None
            if not isinstance(filters, dict):
                continue
            for category, verdict in filters.items():
                if isinstance(verdict, dict) and verdict.get("filtered") is True:
                    names = self.filtered.setdefault(where, [])
                    if category not in names:
                        names.append(category)

    def _switch(self, kind: str) -> list[Event]:
        """Close the current block unless it is of ``kind`` (text/thinking); open one if needed."""
        out = self.out
        events: list[Event] = []
        cur = self.current
        if cur is not None and out.is_open(cur) and out.content[cur]["type"] == kind:
            return events
        if cur is not None and out.is_open(cur):
            events.append(out.end_block(cur))
        idx, ev = out.text_start() if kind == "text" else out.thinking_start()
        self.current = idx
        events.append(ev)
        return events

    def _tool_delta(self, call: dict[str, Any]) -> list[Event]:
        out = self.out
        events: list[Event] = []
        key = call.get("index", call.get("id"))
        fn = call.get("function") or {}
        idx = self.tools.get(key)
        if idx is not None and call.get("id") and self.call_ids[idx] != call["id"]:
            idx = None  # same index, new id: servers that send every call whole at index 0
        if idx is None:
            if self.current is not None and out.is_open(self.current):
                events.append(out.end_block(self.current))
            idx, ev = out.toolcall_start(call.get("id") or f"call_{len(self.tools)}", fn.get("name") or "")
            self.call_ids[idx] = call.get("id")  # the server's id (the block's may have been made unique)
            self.tools[key] = idx
            self.current = idx
            events.append(ev)
        elif fn.get("name") and not out.content[idx]["name"]:
            out.content[idx]["name"] = fn["name"]
        if fn.get("arguments") and out.is_open(idx):
            events.append(out.toolcall_delta(idx, fn["arguments"]))
        return events

    def on_event(self, event: str, data: str) -> list[Event]:
        out = self.out
        data = data.strip()
        if not data:
            return []
        if data == "[DONE]":
            return self.finish()
        chunk = event_json.loads(data)
        if not isinstance(chunk, dict):
            return []
        if chunk.get("error"):
            # A mid-stream error object: keep its type/code ("server_error" is what makes it retryable).
            return [out.error(error_object_text(chunk["error"]))]
        if "prompt_filter_results" in chunk:  # Azure only: no call per delta elsewhere
            self._note_filters(chunk["prompt_filter_results"], "prompt")
        if chunk.get("id") and "responseId" not in out.message:
            out.message["responseId"] = chunk["id"]
        if chunk.get("model") and chunk["model"] != self.model.get("id"):
            out.message["responseModel"] = chunk["model"]
        events: list[Event] = []
        choices = chunk.get("choices") or []
        usage = chunk.get("usage") or (choices[0].get("usage") if choices else None)
        if usage:
            self._usage(usage)
        if not choices:
            return events
        choice = choices[0]
        if isinstance(choice, dict) and "content_filter_results" in choice:
            self._note_filters([choice], "response")
        delta = choice.get("delta") or {}
        for field in REASONING_FIELDS:
            text = delta.get(field)
            if isinstance(text, str) and text:
                events += self._switch("thinking")
                out.content[self.current]["thinkingSignature"] = field  # type: ignore[index]
                events.append(out.thinking_delta(self.current, text))  # type: ignore[arg-type]
                break
        if delta.get("reasoning_details"):
            self.reasoning_details.extend(delta["reasoning_details"])
        # A refusal (Structured Outputs and safety answers) streams in ``delta.refusal`` instead of
        # ``content``: it is the reply, so it becomes text like any other answer.
        for field in ("content", "refusal"):
            if isinstance(delta.get(field), str) and delta[field]:
                events += self._switch("text")
                events.append(out.text_delta(self.current, delta[field]))  # type: ignore[arg-type]
        for call in delta.get("tool_calls") or []:
            events += self._tool_delta(call)
        if choice.get("finish_reason"):
            self.finish_reason = choice["finish_reason"]
        return events

    def finish(self) -> list[Event]:
        out = self.out
        if self.reasoning_details:
            for block in out.content:
                if block["type"] == "thinking":
                    block["thinkingSignature"] = json.dumps(self.reasoning_details)
        events = out.end_open_blocks()
        raw = self.finish_reason
        if raw is None:
            if self.filtered.get("prompt") and not out.content:
                # Azure blocked the prompt: not a broken stream (that would be retried), a refusal.
                return [*events, out.error(f"{PROMPT_FILTERED} ({', '.join(self.filtered['prompt'])})")]
            if self.compat["supportsFinishReason"]:
                return [*events, out.error("Stream ended without finish_reason")]
            return [*events, out.done("toolUse" if out.has_tool_calls() else "stop")]
        reason = FINISH_REASONS.get(raw)
        if reason is None:
            message = f"Provider finish_reason: {raw}"  # providers.md §1; classifiers never retry content_filter
            categories = [*self.filtered.get("prompt", []), *self.filtered.get("response", [])]
            if raw == "content_filter" and categories:
                message += f" (filtered: {', '.join(categories)})"  # Azure says which filter fired
            return [*events, out.error(message, raw=raw)]
        if reason == "stop" and out.has_tool_calls():
            reason = "toolUse"  # some local servers say "stop" after tool calls
        return [*events, out.done(reason, raw=raw)]


_TOOL_PARAMS: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
"""The ``tools`` request member per tool set (see :func:`_tool_params`)."""


def _tool_params(tools: list[dict[str, Any]], strict: bool) -> list[dict[str, Any]]:
    """The request's ``tools``: built once per tool set and given to ``freeze_json``, so its JSON
    (most of a request's bytes) is encoded once. A tool set is the names, descriptions and
    ``parameters`` schema objects (each tool's cached schema, ``Tool.json_schema``: the same dict
    every request, never changed once built; the list holds them, so their ids stay theirs)."""
    key = (strict, *((t["name"], t.get("description", ""), id(t.get("parameters"))) for t in tools))
    params = _TOOL_PARAMS.get(key)
    if params is None:
        params = [
            {
                "type": "function",
                "function": {
                    "name": t["name"],
                    "description": t.get("description", ""),
                    "parameters": t.get("parameters") or {"type": "object", "properties": {}},
                    **({"strict": False} if strict else {}),
                },
            }
            for t in tools
        ]
        if all(type(t.get("parameters")) is dict and t["parameters"] for t in tools):  # the ids are of dicts it holds
            if len(_TOOL_PARAMS) >= 16:
                _TOOL_PARAMS.clear()
            _TOOL_PARAMS[key] = freeze_json(params)
    return params


def stream(model: dict[str, Any], context: dict[str, Any], options: StreamOptions) -> AsyncIterator[Event]:
    """Stream one Chat Completions request as neutral events (never raises). ``drive``'s own
    generator, which makes the parser when first read: no generator here yielding each event again."""
    return drive(lambda: ChatParser(model, context, options), options)
