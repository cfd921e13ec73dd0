"""``AssistantStream``: the partial assistant message plus the neutral events every adapter emits.

Adapters translate wire events into calls on this builder and yield what it returns. Every event
carries ``"partial"`` (the one message dict being built). Exactly one terminal event comes from
:meth:`done` or :meth:`error`; after that the builder refuses to emit more.
"""

from __future__ import annotations

import time
from typing import Any

from atomic_host.kit import secrets
from atomic_host.kit.llm.json_parse import parse_arguments, parse_streaming_json
from atomic_host.kit.llm.usage import MAX_COUNT, UsageFields, calculate_cost, empty_usage, token_count
from atomic_host.kit.log import log
from atomic_host.kit.messages import unique_call_id

__all__ = ["AssistantStream", "Event"]

Event = dict[str, Any]
ABORTED_MESSAGE = "Request was aborted"
_NOTED: set[tuple[str, str]] = set()
"""(provider, usage field) already reported as no token count (:meth:`AssistantStream.note_usage`)."""


def _append(block: dict[Any, Any], key: Any, delta: str) -> None:
    """``block[key] += delta`` in amortised O(len(delta)).

    ``block[key] += delta`` copies the whole text on every delta (the dict still holds the old
    string, so CPython cannot grow it in place): 100,000 deltas took 16 s. Taking the string out
    first leaves the local the only reference, and ``+=`` then extends it in place.
    """
    text = block[key]
    block[key] = ""
    text += delta
    block[key] = text


class _Fragments:
    """A tool call's argument text as it streams: fragments kept in a list and joined when read.

    Not ``text += fragment``: that is linear only while CPython can grow the string in place, which
    its specialised instruction does and the generic one does not. Under a profiler, a debugger or
    coverage (any ``sys.setprofile``/``settrace``) every append copied the whole text: a 1 MB
    argument took 0.8 s instead of 60 ms, and ten times that took a hundred times as long."""

    __slots__ = ("length", "parts")

    def __init__(self, text: str = "") -> None:
        self.parts = [text] if text else []
        self.length = len(text)

    def add(self, fragment: str) -> None:
        self.parts.append(fragment)
        self.length += len(fragment)

    def text(self) -> str:
        """The whole text; the fragments are joined into one, so reading it again is free."""
        parts = self.parts
        if len(parts) == 1:
            return parts[0]
        text = "".join(parts)
        self.parts = [text] if text else []
        return text


class AssistantStream:
    """Builds one assistant message and the events describing its growth."""

    def __init__(self, model: dict[str, Any], *, api: str | None = None, provider: str | None = None) -> None:
        self.model = model
        self.message: dict[str, Any] = {
            "role": "assistant",
            "content": [],
            "api": api or model.get("api", ""),
            "provider": provider or model.get("provider", ""),
            "model": model.get("id", ""),
            "usage": empty_usage(),
            "stopReason": "pending",
            "timestamp": int(time.time() * 1000),
        }
        self.cost_multiplier = 1.0
        self.finished = False
        self.started = False
        self._json: dict[int, _Fragments] = {}  # scratch buffers of streaming tool-call arguments
        self._call_ids: set[str] = set()  # the ids of this message's tool calls
        self.incomplete: list[str] = []
        """Ids of the tool calls whose arguments were not a complete JSON object at their end."""
        self._reparse_at: dict[int, int] = {}  # buffer length at which the partial arguments are re-parsed
        self._open: list[int] = []

    # -- events ---------------------------------------------------------------------------------------
    def _ev(self, type_: str, **fields: Any) -> Event:
        return {"type": type_, **fields, "partial": self.message}

    @property
    def content(self) -> list[dict[str, Any]]:
        return self.message["content"]

    def start(self) -> Event:
        self.started = True
        return self._ev("start")

    def _open_block(self, block: dict[str, Any]) -> int:
        self.content.append(block)
        index = len(self.content) - 1
        self._open.append(index)
        return index

    def text_start(self) -> tuple[int, Event]:
        index = self._open_block({"type": "text", "text": ""})
        return index, self._ev("text_start", contentIndex=index)

    def text_delta(self, index: int, delta: str) -> Event:
        _append(self.content[index], "text", delta)
        # _ev's dict, spelled out: this one is made for every delta of a reply
        return {"type": "text_delta", "contentIndex": index, "delta": delta, "partial": self.message}

    def text_end(self, index: int) -> Event:
        self._close(index)
        return self._ev("text_end", contentIndex=index, content=self.content[index]["text"])

    def thinking_start(self) -> tuple[int, Event]:
        index = self._open_block({"type": "thinking", "thinking": ""})
        return index, self._ev("thinking_start", contentIndex=index)

    def thinking_delta(self, index: int, delta: str) -> Event:
        _append(self.content[index], "thinking", delta)
        return {"type": "thinking_delta", "contentIndex": index, "delta": delta, "partial": self.message}

    def thinking_end(self, index: int) -> Event:
        self._close(index)
        return self._ev("thinking_end", contentIndex=index, content=self.content[index]["thinking"])

    def toolcall_start(
        self, id_: str, name: str, arguments: dict[str, Any] | None = None
    ) -> tuple[int, Event]:
        # Ids are unique within a message: a server that numbers its calls per reply, or a proxy
        # that merges two, can repeat one, and each call needs its own result in the next request.
        taken = self._call_ids
        if not id_ or id_ in taken:
            id_ = unique_call_id(id_, taken)
        taken.add(id_)
        block = {"type": "toolCall", "id": id_, "name": name, "arguments": dict(arguments or {})}
        index = self._open_block(block)
        self._json[index] = _Fragments()
        return index, self._ev("toolcall_start", contentIndex=index)

    def toolcall_delta(self, index: int, fragment: str) -> Event:
        buf = self._json.get(index)
        if buf is None:
            buf = self._json[index] = _Fragments()
        buf.add(fragment)
        # The partial arguments are re-parsed only when the buffer has doubled since the last parse:
        # parsing is O(buffer), so parsing on every delta made a 70 KB argument cost 31 s (quadratic);
        # doubling keeps the total linear and the partial view at most one doubling behind. The wire
        # carries only the delta, and toolcall_end always parses the whole buffer.
        if buf.length >= self._reparse_at.get(index, 0):
            self.content[index]["arguments"] = parse_streaming_json(buf.text())
            self._reparse_at[index] = 2 * buf.length + 64
        return self._ev("toolcall_delta", contentIndex=index, delta=fragment)

    def toolcall_buffer(self, index: int) -> str:
        """The raw argument JSON received so far for an open tool call."""
        buf = self._json.get(index)
        return buf.text() if buf is not None else ""

    def set_toolcall_buffer(self, index: int, text: str) -> None:
        """Replace the raw argument JSON (a server's final version) and re-parse it, without an event."""
        self._json[index] = _Fragments(text)
        self.content[index]["arguments"] = parse_streaming_json(text)

    def toolcall_end(self, index: int, final_json: str | None = None) -> Event:
        """End a tool call: its arguments are the JSON received (``final_json``: the server's final
        text instead). When that is not a complete JSON object, the block keeps what the lenient
        parser makes of it, for display, and the call is listed in the ``done`` event's
        ``incompleteToolCalls``: the agent loop answers it with an error and never runs it."""
        buf = final_json if final_json is not None else self.toolcall_buffer(index)
        if buf:
            block = self.content[index]
            block["arguments"], complete = parse_arguments(buf)
            if not complete:
                self.incomplete.append(block["id"])
        self._json.pop(index, None)
        self._reparse_at.pop(index, None)
        self._close(index)
        return self._ev("toolcall_end", contentIndex=index, toolCall=self.content[index])

    def end_block(self, index: int) -> Event:
        kind = self.content[index]["type"]
        if kind == "text":
            return self.text_end(index)
        if kind == "thinking":
            return self.thinking_end(index)
        return self.toolcall_end(index)

    def end_open_blocks(self) -> list[Event]:
        """End events for every block still open, in content order."""
        return [self.end_block(i) for i in sorted(self._open)]

    def is_open(self, index: int) -> bool:
        return index in self._open

    def _close(self, index: int) -> None:
        if index in self._open:
            self._open.remove(index)

    def has_tool_calls(self) -> bool:
        return any(b.get("type") == "toolCall" for b in self.content)

    # -- usage --------------------------------------------------------------------------------------
    def usage_fields(self, raw: Any) -> UsageFields:
        """The provider's usage object ``raw``, to read its counts with ``.count(key, ...)``: each
        an int >= 0 or None, a value that is no count noted once on stderr (:meth:`note_usage`)."""
        return UsageFields(raw, self.note_usage)

    def note_usage(self, field: str, value: Any) -> None:
        """Say on stderr, once per provider and field for the process, that a usage value was no
        token count (it was clamped to 0 or left out); the reply is kept."""
        key = (self.message["provider"], field)
        if key in _NOTED:
            return
        _NOTED.add(key)
        shown = repr(value)
        shown = shown if len(shown) <= 60 else shown[:60] + "…"
        count, _ = token_count(value)
        outcome = "ignored" if count is None else f"counted as {count}"
        log.warning(f"{key[0]}: usage field {field} was {shown}, not a token count; {outcome}")

    def set_usage(self, **fields: Any) -> None:
        """Overwrite the given non-None usage fields, recompute ``totalTokens`` (unless given) and
        cost. Each value is made a token count (``token_count``: never negative, never raises)."""
        usage = self.message["usage"]
        total = None
        for key, value in fields.items():
            if value is None:
                continue
            if type(value) is not int or value < 0 or value > MAX_COUNT:
                value, fine = token_count(value)
                if not fine:
                    self.note_usage(key, fields[key])
                if value is None:
                    continue
            if key == "totalTokens":
                total = value
            else:
                usage[key] = value
        usage["totalTokens"] = (
            total if total is not None else usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
        )
        calculate_cost(self.model, usage, self.cost_multiplier)

    # -- terminal events ----------------------------------------------------------------------------
    def done(self, reason: str = "stop", raw: str | None = None) -> Event:
        """The ``done`` event; ``reason`` is stop, length or toolUse. It lists the tool calls whose
        arguments were not complete JSON in ``incompleteToolCalls`` (ids; absent when none)."""
        self.finished = True
        self._json.clear()
        self.message["stopReason"] = reason
        if raw is not None:
            self.message["rawStopReason"] = raw
        event = {"type": "done", "reason": reason, "message": self.message, "partial": self.message}
        if self.incomplete:
            event["incompleteToolCalls"] = list(self.incomplete)
        return event

    def error(self, message: str, *, aborted: bool = False, raw: str | None = None) -> Event:
        """The ``error`` event; ``aborted`` gives stopReason "aborted" (message "Request was aborted")."""
        self.finished = True
        self._json.clear()
        reason = "aborted" if aborted else "error"
        self.message["stopReason"] = reason
        # Error text quotes server bodies, and proxies echo request headers: mask the credentials here,
        # where every adapter's error is built, so the message is clean wherever it goes next.
        self.message["errorMessage"] = ABORTED_MESSAGE if aborted and not message else secrets.mask(message)
        if raw is not None:
            self.message["rawStopReason"] = raw
        return {"type": "error", "reason": reason, "error": self.message, "partial": self.message}
