"""google-generative-ai adapter: the Gemini API,
``POST {baseUrl}/v1beta/models/{model}:streamGenerateContent?alt=sse``.

Each ``data:`` frame is a whole ``GenerateContentResponse``: ``candidates[0].content.parts`` (text,
``thought: true`` text, ``functionCall``, ``thoughtSignature`` on any of them), ``finishReason``,
``promptFeedback`` and a running ``usageMetadata``. The stream has no end marker: the server closes
it after the frame with the ``finishReason``.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

from atomic_host.contract.providers import StreamOptions
from atomic_host.kit.llm import event_json
from atomic_host.kit.llm.context import clamp_max_tokens, text_of, transform_messages
from atomic_host.kit.llm.http import WireParser, drive, request_headers
from atomic_host.kit.llm.stream import AssistantStream, Event

API = "google-generative-ai"
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
GENERATED_ID_PREFIX = "gcall_"
"""Tool-call ids the adapter made up (Gemini 2.x sends none); never sent back as ``id``."""
SKIP_SIGNATURE = "skip_thought_signature_validator"
"""What Gemini 3 accepts in place of the signature of a function call it did not make."""

# Thinking budgets per model family (Gemini API docs, "Set budget"); xhigh/max use high.
BUDGETS = {
    "pro": {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768},
    "flash": {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576},
    "flash-lite": {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576},
}
LEVELS = {"minimal": "MINIMAL", "low": "LOW", "medium": "MEDIUM", "high": "HIGH"}

# finishReason → the end of the errorMessage ("Gemini stopped the response <this>").
_STOPPED = {
    "SAFETY": "for safety reasons",
    "IMAGE_SAFETY": "for safety reasons (image)",
    "PROHIBITED_CONTENT": "for prohibited content (content policy)",
    "IMAGE_PROHIBITED_CONTENT": "for prohibited image content (content policy)",
    "BLOCKLIST": "because it contained blocklisted terms (content policy)",
    "SPII": "because it contained sensitive personal information (content policy)",
    "RECITATION": "because it recited training data (recitation)",
    "IMAGE_RECITATION": "because an image recited training data (recitation)",
    "LANGUAGE": "because the language is not supported",
    "MALFORMED_FUNCTION_CALL": "because the model produced a malformed function call",
    "UNEXPECTED_TOOL_CALL": "because the model called a tool that was not declared",
    "TOO_MANY_TOOL_CALLS": "because the model made too many tool calls",
    "NO_IMAGE": "because the model produced no image",
    "OTHER": "for an unspecified reason",
    "IMAGE_OTHER": "for an unspecified reason (image)",
    "FINISH_REASON_UNSPECIFIED": "for an unspecified reason",
}
_BLOCKED = {
    "SAFETY": "for safety reasons",
    "IMAGE_SAFETY": "for safety reasons (image)",
    "PROHIBITED_CONTENT": "for prohibited content (content policy)",
    "BLOCKLIST": "because it contained blocklisted terms (content policy)",
    "OTHER": "for an unspecified reason",
    "BLOCK_REASON_UNSPECIFIED": "for an unspecified reason",
}
_B64 = re.compile(r"^[A-Za-z0-9+/_-]+={0,2}$")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")
_HTTP_ERROR = re.compile(r"^(\d{3}) (.*)$", re.DOTALL)
_VERSION_SUFFIX = re.compile(r"/v1(?:alpha|beta)?\d*$")


def _compat(model: dict[str, Any], key: str, default: Any) -> Any:
    value = (model.get("compat") or {}).get(key)
    return default if value is None else value


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


# -- tool schemas -------------------------------------------------------------------------------------

_SCHEMA_KEYS = frozenset({
    "type", "format", "title", "description", "nullable", "enum", "items", "properties", "required",
    "minItems", "maxItems", "minLength", "maxLength", "pattern", "minimum", "maximum",
    "minProperties", "maxProperties", "anyOf", "propertyOrdering",
})  # fmt: skip
_FORMATS = {"string": {"enum", "date-time"}, "integer": {"int32", "int64"}, "number": {"float", "double"}}
_MAX_DEPTH = 24


def gemini_schema(schema: Any) -> dict[str, Any]:
    """A JSON Schema turned into the OpenAPI subset ``functionDeclarations[].parameters`` accepts.

    The API answers 400 to ``$schema``, ``additionalProperties``, ``$ref``, ``const``, ``oneOf``,
    type lists and string formats other than ``enum``/``date-time``: ``$ref``s are inlined from
    ``$defs``/``definitions`` (a recursive one becomes a plain object), ``oneOf`` becomes ``anyOf``,
    ``allOf`` is merged, ``["x", "null"]`` and ``anyOf [X, null]`` become ``nullable``, ``const``
    a one-value ``enum``, and every other unknown keyword is dropped.
    """
    if not isinstance(schema, dict):
        return {}
    defs = {**_dict(schema.get("definitions")), **_dict(schema.get("$defs"))}
    return _schema(schema, defs, (), 0)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _resolve(node: dict[str, Any], defs: dict[str, Any], seen: tuple[str, ...]) -> tuple[dict[str, Any], tuple]:
    ref = node.get("$ref")
    if not isinstance(ref, str):
        return node, seen
    name = ref.rsplit("/", 1)[-1]
    target = defs.get(name)
    rest = {k: v for k, v in node.items() if k != "$ref"}
    if not isinstance(target, dict) or name in seen:
        return {"type": "object", **rest}, seen
    return {**target, **rest}, (*seen, name)


def _schema(node: Any, defs: dict[str, Any], seen: tuple[str, ...], depth: int) -> dict[str, Any]:
    if not isinstance(node, dict):
        return {}
    if depth > _MAX_DEPTH:
        return {"type": "object"}
    node, seen = _resolve(node, defs, seen)
    node = dict(node)
    subs = node.pop("allOf", None)
    for sub in subs if isinstance(subs, list) else []:
        sub, seen = _resolve(sub, defs, seen) if isinstance(sub, dict) else ({}, seen)
        for key, value in sub.items():
            if key == "properties" and isinstance(value, dict):
                node["properties"] = {**_dict(node.get("properties")), **value}
            elif key == "required" and isinstance(value, list):
                node["required"] = [*(node.get("required") or []), *value]
            else:
                node.setdefault(key, value)
    options = node.pop("anyOf", None) or node.pop("oneOf", None)
    node.pop("oneOf", None)
    out: dict[str, Any] = {}
    nullable = node.get("nullable") is True
    if isinstance(options, list) and options:
        kept = []
        for option in options:
            if isinstance(option, dict) and option.get("type") == "null":
                nullable = True
            else:
                kept.append(_schema(option, defs, seen, depth + 1))
        if len(kept) == 1:  # Optional[X]: X itself, nullable, with this node's description
            out.update(kept[0])
        elif kept:
            out["anyOf"] = kept
    kind = node.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if isinstance(k, str) and k != "null"]
        nullable = nullable or "null" in kind
        if len(kinds) == 1:
            kind = kinds[0]
        else:
            out["anyOf"] = [{"type": k} for k in kinds]
            kind = None
    if kind == "null":
        kind, nullable = "string", True
    if isinstance(kind, str):
        out["type"] = kind
    if "const" in node and isinstance(node["const"], str):
        out.update(type="string", enum=[node["const"]])
    for key, value in node.items():
        if key not in _SCHEMA_KEYS or key in ("type", "anyOf", "nullable"):
            continue
        if key == "properties":
            if isinstance(value, dict):
                out["properties"] = {
                    str(k): _schema(v, defs, seen, depth + 1) for k, v in value.items() if isinstance(v, dict)
                }
        elif key == "items":
            if isinstance(value, dict):
                out["items"] = _schema(value, defs, seen, depth + 1)
        elif key == "enum":
            values = [v for v in value if v is not None] if isinstance(value, list) else []
            nullable = nullable or (isinstance(value, list) and None in value)
            if values and all(isinstance(v, str) for v in values):
                out["enum"] = values  # only string enums exist in the API
                out.setdefault("type", "string")
        elif key == "format":
            if isinstance(value, str) and value in _FORMATS.get(str(out.get("type")), ()):
                out["format"] = value
        elif key == "required":
            if isinstance(value, list):
                out["required"] = value
        elif key in ("title", "description", "pattern"):
            if isinstance(value, str):
                out[key] = value
        elif key == "propertyOrdering":
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                out[key] = value
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out[key] = value
    if "required" in out:
        props = out.get("properties") or {}
        out["required"] = list(dict.fromkeys(r for r in out["required"] if isinstance(r, str) and r in props))
        if not out["required"]:
            del out["required"]
    if out.get("type") == "array" and not out.get("items"):
        out["items"] = {"type": "string"}  # the API requires items for arrays
    if nullable:
        out["nullable"] = True
    return out


def function_declarations(tools: list[dict[str, Any]], model: dict[str, Any]) -> list[dict[str, Any]]:
    """``tools[0].functionDeclarations`` for the context's tools."""
    raw = _compat(model, "supportsParametersJsonSchema", False)
    out: list[dict[str, Any]] = []
    for tool in tools:
        decl: dict[str, Any] = {"name": tool["name"], "description": tool.get("description", "")}
        params = tool.get("parameters") or {}
        if raw:
            decl["parametersJsonSchema"] = {k: v for k, v in params.items() if k != "$schema"}
        else:
            schema = gemini_schema(params)
            # An object with no properties is refused ("should be non-empty for OBJECT type"): a tool
            # without parameters declares none.
            if schema.get("properties") or schema.get("type") not in (None, "object"):
                decl["parameters"] = schema
        out.append(decl)
    return out


# -- messages -----------------------------------------------------------------------------------------


def _signature(value: Any) -> str | None:
    """A thought signature fit to send back (they are base64 bytes; anything else is refused)."""
    return value if isinstance(value, str) and value and _B64.match(value) else None


def _user_parts(content: Any, with_images: bool) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}] if content else []
    parts: list[dict[str, Any]] = []
    for b in content or []:
        if b.get("type") == "text" and b.get("text"):
            parts.append({"text": b["text"]})
        elif b.get("type") == "image" and with_images:
            parts.append({"inlineData": {"mimeType": b.get("mimeType", "image/png"), "data": b.get("data", "")}})
    return parts


def _is_same(msg: dict[str, Any], model: dict[str, Any]) -> bool:
    return (msg.get("provider"), msg.get("api"), msg.get("model")) == (
        model.get("provider"), model.get("api"), model.get("id"))  # fmt: skip


def convert_contents(messages: list[dict[str, Any]], model: dict[str, Any]) -> list[dict[str, Any]]:
    """Neutral messages → Gemini ``contents`` (roles ``user``/``model``; tool results merged into one
    user turn, their images after the ``functionResponse`` parts)."""
    with_images = "image" in (model.get("input") or ["text"])
    gemini3 = "gemini-3" in str(model.get("id", "")).lower()
    out: list[dict[str, Any]] = []
    server_ids: set[str] = set()  # tool calls whose id came from Gemini (sent back as ``id``)
    pending_images: list[dict[str, Any]] = []

    def flush_images() -> None:
        if pending_images:
            out[-1]["parts"].extend(pending_images)
            pending_images.clear()

    for msg in transform_messages(messages, model):
        role = msg.get("role")
        if role != "toolResult":
            flush_images()
        if role == "user":
            parts = _user_parts(msg.get("content"), with_images)
            if parts:
                out.append({"role": "user", "parts": parts})
        elif role == "assistant":
            same = _is_same(msg, model)
            parts = []
            for b in msg.get("content") or []:
                kind = b.get("type")
                if kind == "text":
                    sig = _signature(b.get("textSignature")) if same else None
                    if b.get("text") or sig:
                        parts.append({"text": b.get("text", ""), **({"thoughtSignature": sig} if sig else {})})
                elif kind == "thinking":
                    sig = _signature(b.get("thinkingSignature"))
                    if b.get("redacted") or not ((b.get("thinking") or "").strip() or sig):
                        continue
                    part = {"thought": True, "text": b.get("thinking", "")}
                    parts.append({**part, "thoughtSignature": sig} if sig else part)
                elif kind == "toolCall":
                    call: dict[str, Any] = {"name": b.get("name", ""), "args": b.get("arguments") or {}}
                    if same and not str(b.get("id", "")).startswith(GENERATED_ID_PREFIX):
                        call["id"] = b["id"]
                        server_ids.add(b["id"])
                    part = {"functionCall": call}
                    sig = _signature(b.get("thoughtSignature")) if same else None
                    if sig or gemini3:
                        part["thoughtSignature"] = sig or SKIP_SIGNATURE
                    parts.append(part)
            if parts:
                out.append({"role": "model", "parts": parts})
        elif role == "toolResult":
            text = text_of(msg.get("content"))
            images = _user_parts([b for b in msg.get("content") or [] if b.get("type") == "image"], with_images)
            value = text or ("(see the attached image)" if images else "(no output)")
            response: dict[str, Any] = {
                "name": msg.get("toolName", ""),
                "response": {"error": value} if msg.get("isError") else {"output": value},
            }
            if msg.get("toolCallId") in server_ids:
                response["id"] = msg["toolCallId"]
            part = {"functionResponse": response}
            last = out[-1] if out else None
            if last and last["role"] == "user" and any("functionResponse" in p for p in last["parts"]):
                last["parts"].append(part)
            else:
                out.append({"role": "user", "parts": [part]})
            pending_images.extend(images)
    flush_images()
    return out


# -- errors -------------------------------------------------------------------------------------------


def _duration_ms(value: Any) -> int | None:
    m = _DURATION.match(value) if isinstance(value, str) else None
    return round(float(m.group(1)) * 1000) if m else None


def google_error(err: Any, http_status: int | None = None) -> tuple[str, int | None]:
    """``("<code> <STATUS>: <message>", RetryInfo delay in ms)`` for a Google error object
    ``{"code", "message", "status", "details": [...]}``; the reason of an ``ErrorInfo`` detail is
    kept in parentheses."""
    if not isinstance(err, dict):
        return str(err), None
    code = _int(err.get("code")) or http_status
    status = err.get("status") if isinstance(err.get("status"), str) else ""
    message = err.get("message") if isinstance(err.get("message"), str) else ""
    retry_ms: int | None = None
    reason = ""
    for detail in err.get("details") if isinstance(err.get("details"), list) else []:
        if not isinstance(detail, dict):
            continue
        kind = str(detail.get("@type", ""))
        if kind.endswith("google.rpc.RetryInfo"):
            retry_ms = _duration_ms(detail.get("retryDelay"))
        elif kind.endswith("google.rpc.ErrorInfo") and isinstance(detail.get("reason"), str):
            reason = detail["reason"]
    head = " ".join(str(p) for p in (code, status) if p)
    text = f"{head}: {message.strip()}" if head and message.strip() else head or message.strip() or json.dumps(err)
    if reason and reason not in text:
        text += f" ({reason})"
    return text, retry_ms


def _error_object(value: Any) -> Any:
    """The ``error`` object of a Google error body (an object, or an array of one, as some endpoints
    answer), or None."""
    if isinstance(value, list) and value:
        value = value[0]
    return value.get("error") if isinstance(value, dict) and isinstance(value.get("error"), dict) else None


def rewrite_http_error(message: dict[str, Any]) -> None:
    """Turn ``"<status> <Google error JSON>"`` into ``"<code> <STATUS>: <message>"`` and keep a
    ``RetryInfo.retryDelay`` as ``retryAfterMs`` (a ``retry-after`` header, when sent, wins)."""
    m = _HTTP_ERROR.match(str(message.get("errorMessage") or ""))
    if not m:
        return
    try:
        err = _error_object(json.loads(m.group(2)))
    except ValueError:
        return
    if err is None:
        return
    text, retry_ms = google_error(err, int(m.group(1)))
    message["errorMessage"] = text
    if retry_ms is not None and "retryAfterMs" not in message:
        message["retryAfterMs"] = retry_ms


# -- the stream ---------------------------------------------------------------------------------------


def _ratings(ratings: Any) -> str:
    """The categories that blocked (else those rated HIGH/MEDIUM), comma-separated."""
    if not isinstance(ratings, list):
        return ""
    rated = [r for r in ratings if isinstance(r, dict) and isinstance(r.get("category"), str)]
    hits = [r["category"] for r in rated if r.get("blocked") is True]
    hits = hits or [r["category"] for r in rated if r.get("probability") in ("HIGH", "MEDIUM")]
    return ", ".join(dict.fromkeys(hits))


class GeminiParser(WireParser):
    """Request building and frame mapping for one ``streamGenerateContent`` call."""

    def __init__(self, model: dict[str, Any], context: dict[str, Any], options: StreamOptions) -> None:
        super().__init__(AssistantStream(model, api=API))
        self.model, self.context, self.options = model, context, options
        self.current: int | None = None  # the open text/thinking block receiving parts
        self.pending_signature: str | None = None  # a signature that came before any block
        self.call_ids: set[str] = set()
        self.finish_reason: str | None = None
        self.finish_message = ""
        self.safety = ""

    # -- request ------------------------------------------------------------------------------------
    def request(self) -> tuple[str, dict[str, str], dict[str, Any]]:
        model, options = self.model, self.options
        body: dict[str, Any] = {"contents": convert_contents(self.context.get("messages") or [], model)}
        if self.context.get("systemPrompt"):
            body["systemInstruction"] = {"parts": [{"text": self.context["systemPrompt"]}]}
        tools = self.context.get("tools") or []
        if tools:
            body["tools"] = [{"functionDeclarations": function_declarations(tools, model)}]
        config: dict[str, Any] = {"maxOutputTokens": clamp_max_tokens(model, self.context, options.max_tokens)}
        if options.temperature is not None:
            config["temperature"] = options.temperature
        thinking = self._thinking()
        if thinking is not None:
            budget = thinking.get("thinkingBudget") or 0
            if budget > 0:  # thoughts count against maxOutputTokens
                limit = int(model.get("maxTokens") or 0) or config["maxOutputTokens"] + budget
                config["maxOutputTokens"] = min(config["maxOutputTokens"] + budget, limit)
            config["thinkingConfig"] = thinking
        body["generationConfig"] = config
        auth = {"x-goog-api-key": options.api_key} if options.api_key else {}
        headers = request_headers(model, options, auth)
        base = (model.get("baseUrl") or DEFAULT_BASE_URL).rstrip("/")
        if not _VERSION_SUFFIX.search(base):
            base += "/v1beta"
        model_id = str(model["id"]).removeprefix("models/")
        return f"{base}/models/{model_id}:streamGenerateContent?alt=sse", headers, body

    def _thinking(self) -> dict[str, Any] | None:
        model, level = self.model, self.options.reasoning
        if not model.get("reasoning"):
            return None
        level_map = model.get("thinkingLevelMap") or {}
        model_id = str(model.get("id", "")).lower()
        by_level = _compat(model, "thinkingFormat", "level" if "gemini-3" in model_id else "budget") == "level"
        if level is None or level == "off":
            off = level_map.get("off", "")
            if off is None:
                return None  # cannot be switched off: the model's default
            if by_level:
                return {"thinkingLevel": off} if isinstance(off, str) and off else None
            return {"thinkingBudget": 0}
        if level not in LEVELS:
            level = "high"
        if by_level:
            mapped = level_map.get(level)
            return {"includeThoughts": True, "thinkingLevel": mapped if isinstance(mapped, str) else LEVELS[level]}
        custom = self.options.thinking_budgets or {}
        if isinstance(custom.get(level), int):
            budget = custom[level]
        else:
            family = next((f for f in ("flash-lite", "flash", "pro") if f in model_id), None)
            budget = BUDGETS[family][level] if family else -1  # -1: the model decides
        return {"includeThoughts": True, "thinkingBudget": budget}

    # -- response -----------------------------------------------------------------------------------
    def _usage(self, meta: dict[str, Any]) -> None:
        count = self.out.usage_fields(meta).count
        prompt = (count("promptTokenCount") or 0) + (count("toolUsePromptTokenCount") or 0)
        cached = count("cachedContentTokenCount") or 0
        thoughts = count("thoughtsTokenCount")
        self.out.set_usage(
            input=max(0, prompt - cached),
            output=(count("candidatesTokenCount") or 0) + (thoughts or 0),
            cacheRead=cached,
            cacheWrite=0,
            reasoning=thoughts,
            totalTokens=count("totalTokenCount"),
        )

    def _close_current(self) -> list[Event]:
        cur, self.current = self.current, None
        return [self.out.end_block(cur)] if cur is not None and self.out.is_open(cur) else []

    def _sign(self, idx: int, signature: str | None) -> None:
        if not signature:
            return
        block = self.out.content[idx]
        key = {"text": "textSignature", "thinking": "thinkingSignature"}.get(block["type"], "thoughtSignature")
        block[key] = signature

    def _text_part(self, text: str, thought: bool, signature: str | None) -> list[Event]:
        out, kind = self.out, "thinking" if thought else "text"
        events: list[Event] = []
        cur = self.current
        if cur is None or not out.is_open(cur) or out.content[cur]["type"] != kind:
            if not text and not signature:
                return events
            events += self._close_current()
            cur, ev = out.thinking_start() if thought else out.text_start()
            self.current = cur
            events.append(ev)
            signature = signature or self.pending_signature
            self.pending_signature = None
        if text:
            events.append(out.thinking_delta(cur, text) if thought else out.text_delta(cur, text))
        self._sign(cur, signature)
        return events

    def _function_call(self, call: dict[str, Any], signature: str | None) -> list[Event]:
        out = self.out
        events = self._close_current()
        name = call.get("name") if isinstance(call.get("name"), str) else ""
        args = call.get("args") if isinstance(call.get("args"), dict) else {}
        given = call.get("id") if isinstance(call.get("id"), str) else ""
        call_id = given if given and given not in self.call_ids else f"{GENERATED_ID_PREFIX}{uuid.uuid4().hex[:20]}"
        self.call_ids.add(call_id)
        idx, ev = out.toolcall_start(call_id, name)
        events.append(ev)
        events.append(out.toolcall_delta(idx, json.dumps(args, ensure_ascii=False)))
        self._sign(idx, signature or self.pending_signature)
        self.pending_signature = None
        events.append(out.toolcall_end(idx))
        return events

    def _parts(self, parts: list[Any]) -> list[Event]:
        events: list[Event] = []
        for part in parts:
            if not isinstance(part, dict):
                continue
            signature = part.get("thoughtSignature") if isinstance(part.get("thoughtSignature"), str) else None
            if isinstance(part.get("functionCall"), dict):
                events += self._function_call(part["functionCall"], signature)
            elif isinstance(part.get("text"), str):
                events += self._text_part(part["text"], part.get("thought") is True, signature)
            elif signature:  # a signature on a part of its own: it belongs to what came before
                if self.current is not None and self.out.is_open(self.current):
                    self._sign(self.current, signature)
                elif self.out.content:
                    self._sign(len(self.out.content) - 1, signature)
                else:
                    self.pending_signature = signature
        return events

    def on_event(self, event: str, data: str) -> list[Event]:
        data = data.strip()
        if not data:
            return []
        try:
            frame = event_json.loads(data)
        except ValueError:
            excerpt = data if len(data) <= 200 else data[:200] + "…"
            return [self.out.error(f"Gemini sent a frame that is not JSON: {excerpt}")]
        events: list[Event] = []
        for chunk in frame if isinstance(frame, list) else [frame]:
            if isinstance(chunk, dict):
                events += self._chunk(chunk)
                if self.out.finished:
                    break
        return events

    def _chunk(self, chunk: dict[str, Any]) -> list[Event]:
        out = self.out
        if isinstance(chunk.get("error"), dict):  # an error after the 200: the same object as an HTTP error body
            text, retry_ms = google_error(chunk["error"])
            event = out.error(text)
            if retry_ms is not None:
                out.message["retryAfterMs"] = retry_ms
            return [event]
        if isinstance(chunk.get("responseId"), str) and "responseId" not in out.message:
            out.message["responseId"] = chunk["responseId"]
        version = chunk.get("modelVersion")
        if isinstance(version, str) and version and version != self.model.get("id"):
            out.message["responseModel"] = version
        if isinstance(chunk.get("usageMetadata"), dict):
            self._usage(chunk["usageMetadata"])
        feedback = chunk.get("promptFeedback")
        if isinstance(feedback, dict) and isinstance(feedback.get("blockReason"), str):
            return self._blocked(feedback)
        candidates = chunk.get("candidates")
        candidate = candidates[0] if isinstance(candidates, list) and candidates else None
        if not isinstance(candidate, dict):
            return []
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        events = self._parts(parts) if isinstance(parts, list) else []
        if isinstance(candidate.get("finishReason"), str):
            self.finish_reason = candidate["finishReason"]
            self.safety = _ratings(candidate.get("safetyRatings")) or self.safety
            if isinstance(candidate.get("finishMessage"), str):
                self.finish_message = candidate["finishMessage"].strip()
        return events

    def _blocked(self, feedback: dict[str, Any]) -> list[Event]:
        reason = feedback["blockReason"]
        why = _BLOCKED.get(reason, "")
        categories = _ratings(feedback.get("safetyRatings"))
        detail = f"blockReason {reason}" + (f": {categories}" if categories else "")
        message = f"Gemini blocked the prompt {why} ({detail})".replace("  ", " ")
        if isinstance(feedback.get("blockReasonMessage"), str) and feedback["blockReasonMessage"].strip():
            message += f": {feedback['blockReasonMessage'].strip()}"
        return [*self.out.end_open_blocks(), self.out.error(message, raw=f"blockReason.{reason}")]

    def finish(self) -> list[Event]:
        out = self.out
        events = out.end_open_blocks()
        raw = self.finish_reason
        if raw is None:
            return [*events, out.error("Gemini stream ended without a finishReason")]
        if raw == "STOP":
            return [*events, out.done("toolUse" if out.has_tool_calls() else "stop", raw=raw)]
        if raw == "MAX_TOKENS":
            # Even with function calls: a reply cut off by the output limit may hold a cut-off call,
            # and the host answers the calls of a length stop with an error instead of running them.
            return [*events, out.done("length", raw=raw)]
        why = _STOPPED.get(raw)
        if why is None:
            message = f"Gemini stopped with an unknown finishReason: {raw}"
        else:
            detail = f"finishReason {raw}" + (f": {self.safety}" if self.safety else "")
            message = f"Gemini stopped the response {why} ({detail})"
        if self.finish_message:
            message += f": {self.finish_message}"
        return [*events, out.error(message, raw=raw)]


async def stream(model: dict[str, Any], context: dict[str, Any], options: StreamOptions) -> AsyncIterator[Event]:
    """Stream one Gemini ``streamGenerateContent`` request as neutral events (never raises)."""
    async for event in drive(GeminiParser(model, context, options), options):
        if event["type"] == "error":
            rewrite_http_error(event["error"])
        yield event
