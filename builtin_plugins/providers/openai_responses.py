"""openai-responses adapter: ``POST {baseUrl}/responses`` with SSE (stateless: ``store:false``)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from atomic_host.contract.providers import StreamOptions
from atomic_host.kit.llm import event_json
from atomic_host.kit.llm.context import clamp_max_tokens, text_of, transform_messages
from atomic_host.kit.llm.http import WireParser, bearer, drive, request_headers
from atomic_host.kit.llm.stream import AssistantStream, Event
from atomic_host.kit.llm.wire_errors import error_code, error_message
from atomic_host.kit.messages import unique_call_id

API = "openai-responses"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
SERVICE_TIER_MULTIPLIER = {"flex": 0.5, "priority": 2.0}


def _split_id(id_: str) -> tuple[str, str | None]:
    call_id, _, item_id = id_.partition("|")
    return call_id, item_id or None


def _input_parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "input_text", "text": content}]
    parts: list[dict[str, Any]] = []
    for b in content or []:
        if b.get("type") == "text":
            parts.append({"type": "input_text", "text": b.get("text", "")})
        elif b.get("type") == "image":
            url = f"data:{b.get('mimeType', 'image/png')};base64,{b.get('data', '')}"
            parts.append({"type": "input_image", "detail": "auto", "image_url": url})
    return parts


def convert_input(context: dict[str, Any], model: dict[str, Any]) -> list[dict[str, Any]]:
    """Neutral context → Responses ``input`` items."""
    compat = model.get("compat") or {}
    items: list[dict[str, Any]] = []
    if context.get("systemPrompt"):
        developer = model.get("reasoning") and compat.get("supportsDeveloperRole", True) is not False
        items.append({"role": "developer" if developer else "system", "content": context["systemPrompt"]})
    for msg in transform_messages(context.get("messages") or [], model):
        role = msg.get("role")
        if role == "user":
            items.append({"role": "user", "content": _input_parts(msg.get("content"))})
        elif role == "assistant":
            for b in msg.get("content") or []:
                kind = b.get("type")
                if kind == "thinking" and b.get("thinkingSignature"):
                    try:
                        items.append(json.loads(b["thinkingSignature"]))
                    except ValueError:
                        continue
                elif kind == "text" and b.get("text"):
                    item = {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": b["text"], "annotations": []}],
                        "status": "completed",
                    }
                    if str(b.get("textSignature") or "").startswith("msg"):
                        item["id"] = b["textSignature"]
                    items.append(item)
                elif kind == "toolCall":
                    call_id, item_id = _split_id(b["id"])
                    call = {
                        "type": "function_call",
                        "call_id": call_id,
                        "name": b["name"],
                        "arguments": json.dumps(b.get("arguments") or {}),
                    }
                    if item_id and item_id.startswith("fc"):
                        call["id"] = item_id
                    items.append(call)
        elif role == "toolResult":
            call_id, _ = _split_id(msg.get("toolCallId", ""))
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": call_id,
                    "output": text_of(msg.get("content")) or "(no output)",
                }
            )
            images = [p for p in _input_parts(msg.get("content")) if p["type"] == "input_image"]
            if images:
                items.append(
                    {
                        "role": "user",
                        "content": [
                            {"type": "input_text", "text": "Attached image(s) from tool result:"},
                            *images,
                        ],
                    }
                )
    return items


class ResponsesParser(WireParser):
    """Request building and event mapping for one Responses API call."""

    def __init__(self, model: dict[str, Any], context: dict[str, Any], options: StreamOptions) -> None:
        super().__init__(AssistantStream(model, api=API))
        self.model, self.context, self.options = model, context, options
        self.slots: dict[int, int] = {}  # output_index → contentIndex
        self.summary_parts: dict[int, int] = {}  # contentIndex → summary_index of the part being streamed
        self.call_ids: set[str] = set()  # function-call ids and item ids given out (made unique)
        self.item_ids: set[str] = set()

    def request(self) -> tuple[str, dict[str, str], dict[str, Any]]:
        model, options = self.model, self.options
        body: dict[str, Any] = {
            "model": model["id"],
            "input": convert_input(self.context, model),
            "stream": True,
            "store": False,
            "max_output_tokens": max(16, clamp_max_tokens(model, self.context, options.max_tokens)),
        }
        if options.temperature is not None:
            body["temperature"] = options.temperature
        tools = self.context.get("tools") or []
        if tools:
            body["tools"] = [
                {
                    "type": "function",
                    "name": t["name"],
                    "description": t.get("description", ""),
                    "parameters": t.get("parameters") or {"type": "object", "properties": {}},
                    "strict": False,
                }
                for t in tools
            ]
        if model.get("reasoning"):
            level_map = model.get("thinkingLevelMap") or {}
            level = options.reasoning
            if level is not None and level != "off":
                mapped = level_map.get(level)
                body["reasoning"] = {
                    "effort": mapped if isinstance(mapped, str) else level,
                    "summary": "auto",
                }
                body["include"] = ["reasoning.encrypted_content"]
            elif not ("off" in level_map and level_map["off"] is None):
                off = level_map.get("off")
                body["reasoning"] = {"effort": off if isinstance(off, str) else "none"}
        if options.session_id:
            body["prompt_cache_key"] = options.session_id
        headers = request_headers(model, options, bearer(options))
        base = (model.get("baseUrl") or DEFAULT_BASE_URL).rstrip("/")
        return f"{base}/responses", headers, body

    # -- response -----------------------------------------------------------------------------------
    def _usage(self, response: dict[str, Any]) -> None:
        usage = response.get("usage")
        tier = response.get("service_tier")
        if tier in SERVICE_TIER_MULTIPLIER:
            mult = SERVICE_TIER_MULTIPLIER[tier]
            if tier == "priority" and str(self.model.get("id", "")).startswith("gpt-5.5"):
                mult = 2.5
            self.out.cost_multiplier = mult
        if not usage:
            return
        count = self.out.usage_fields(usage).count
        cached = count("input_tokens_details", "cached_tokens") or 0
        written = count("input_tokens_details", "cache_write_tokens") or 0
        self.out.set_usage(
            input=max(0, (count("input_tokens") or 0) - cached - written),
            output=count("output_tokens") or 0,
            cacheRead=cached,
            cacheWrite=written,
            reasoning=count("output_tokens_details", "reasoning_tokens"),
            totalTokens=count("total_tokens"),
        )

    def _call_id(self, item: dict[str, Any]) -> str:
        """``<call_id>|<item id>`` of a function call, unique in the response: a repeated call id
        is made unique (its output goes back under that one), a repeated item id is dropped (the
        replayed item then has none, which the API accepts)."""
        call_id, item_id = str(item.get("call_id", "")), str(item.get("id", ""))
        if call_id in self.call_ids:
            call_id = unique_call_id(call_id, self.call_ids)
        if item_id in self.item_ids:
            item_id = ""
        self.call_ids.add(call_id)
        self.item_ids.add(item_id)
        return f"{call_id}|{item_id}"

    def _slot(self, payload: dict[str, Any]) -> int | None:
        idx = self.slots.get(payload.get("output_index", -1))
        return idx if idx is not None and self.out.is_open(idx) else None

    def on_event(self, event: str, data: str) -> list[Event]:
        out = self.out
        if not data or data.strip() == "[DONE]":
            return []
        payload = event_json.loads(data)
        kind = payload.get("type") or event
        if kind in ("response.created", "response.in_progress"):
            rid = (payload.get("response") or {}).get("id")
            if rid:
                out.message["responseId"] = rid
            return []
        if kind == "response.output_item.added":
            item = payload.get("item") or {}
            itype = item.get("type")
            if itype == "reasoning":
                idx, ev = out.thinking_start()
            elif itype == "message":
                idx, ev = out.text_start()
            elif itype == "function_call":
                idx, ev = out.toolcall_start(self._call_id(item), item.get("name", ""))
                self.slots[payload.get("output_index", 0)] = idx
                events = [ev]
                if item.get("arguments"):
                    events.append(out.toolcall_delta(idx, item["arguments"]))
                return events
            else:
                return []
            self.slots[payload.get("output_index", 0)] = idx
            return [ev]
        if kind == "response.reasoning_summary_part.added":
            idx = self._slot(payload)
            return [] if idx is None else self._summary_part(idx, payload)
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            idx = self._slot(payload)
            if idx is None:
                return []
            events = self._summary_part(idx, payload) if kind == "response.reasoning_summary_text.delta" else []
            return [*events, out.thinking_delta(idx, payload.get("delta", ""))]
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            idx = self._slot(payload)
            return [] if idx is None else [out.text_delta(idx, payload.get("delta", ""))]
        if kind == "response.function_call_arguments.delta":
            idx = self._slot(payload)
            return [] if idx is None else [out.toolcall_delta(idx, payload.get("delta", ""))]
        if kind == "response.function_call_arguments.done":
            idx = self._slot(payload)
            if idx is None:
                return []
            full = payload.get("arguments", "")
            have = out.toolcall_buffer(idx)
            if full.startswith(have):
                return [out.toolcall_delta(idx, full[len(have) :])] if len(full) > len(have) else []
            out.set_toolcall_buffer(idx, full)  # the server's final text wins; no delta to show
            return []
        if kind == "response.output_item.done":
            return self._item_done(payload)
        if kind in ("response.completed", "response.incomplete"):
            response = payload.get("response") or {}
            self._usage(response)
            if isinstance(response.get("end_turn"), bool):  # the Codex backend's explicit end-of-turn signal
                out.message["endTurn"] = response["end_turn"]
            return [*out.end_open_blocks(), self._terminal(response)]
        if kind == "response.failed":
            response = payload.get("response") or {}
            self._usage(response)
            err = response.get("error")
            text = f"{error_code(err)}: {error_message(err, 'Response failed')}"
            return [out.error(text, raw="failed")]
        if kind == "error":
            # The service nests the fields under "error" (the API reference shows them flat).
            err = payload.get("error") if isinstance(payload.get("error"), dict) else payload
            return [out.error(f"Error Code {error_code(err)}: {error_message(err, 'Unknown error')}")]
        return []

    def _summary_part(self, idx: int, payload: dict[str, Any]) -> list[Event]:
        """A blank line between reasoning summary parts: sent when the next part starts, so the
        thinking text does not end with one."""
        part = payload.get("summary_index", 0)
        previous = self.summary_parts.get(idx)
        self.summary_parts[idx] = part
        if previous is None or previous == part or not self.out.content[idx]["thinking"]:
            return []
        return [self.out.thinking_delta(idx, "\n\n")]

    def _item_done(self, payload: dict[str, Any]) -> list[Event]:
        out = self.out
        idx = self._slot(payload)
        if idx is None:
            return []
        item = payload.get("item") or {}
        block = out.content[idx]
        if block["type"] == "thinking":
            if not block["thinking"]:
                summary = "\n\n".join(s.get("text", "") for s in item.get("summary") or [])
                block["thinking"] = summary
            block["thinkingSignature"] = json.dumps(item)
            return [out.thinking_end(idx)]
        if block["type"] == "text":
            if not block["text"]:
                block["text"] = "".join(
                    c.get("text") or c.get("refusal") or "" for c in item.get("content") or []
                )
            if item.get("id"):
                block["textSignature"] = item["id"]
            return [out.text_end(idx)]
        return [out.toolcall_end(idx, final_json=item.get("arguments"))]

    def _terminal(self, response: dict[str, Any]) -> Event:
        out = self.out
        status = response.get("status") or "completed"
        if status in ("completed", "in_progress", "queued"):
            return out.done("toolUse" if out.has_tool_calls() else "stop", raw=status)
        if status == "incomplete":
            reason = (response.get("incomplete_details") or {}).get("reason") or "unknown"
            if reason == "max_output_tokens":
                return out.done("length", raw=f"incomplete.{reason}")
            return out.error(f"Response incomplete: {reason}", raw=f"incomplete.{reason}")
        return out.error(f"Response {status}", raw=status)

    def finish(self) -> list[Event]:
        return [self.out.error("OpenAI Responses stream ended before a terminal response event")]


def stream(model: dict[str, Any], context: dict[str, Any], options: StreamOptions) -> AsyncIterator[Event]:
    """Stream one Responses API request as neutral events (never raises); ``drive``'s own generator."""
    return drive(lambda: ResponsesParser(model, context, options), options)
