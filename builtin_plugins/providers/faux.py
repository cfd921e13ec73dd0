"""The ``faux`` provider: scripted, offline replies that stream like a real model.

A script is a FIFO of steps, one per call. Steps come from the in-process queue (:func:`push`),
then from the JSONL file named by ``ATOMIC_FAUX_SCRIPT`` (re-read on every call, so a test can
append lines while the host runs). A step is a string (a text reply) or::

    {"content": [{"type": "text", "text": "..."}, {"type": "thinking", "thinking": "..."},
                 {"type": "toolCall", "name": "read", "arguments": {...}, "id": "optional"}],
     "stopReason": "stop|length|toolUse|error|aborted", "errorMessage": "...",
     "delayMs": 0, "chunkDelayMs": 0, "usage": {"input": 1, "output": 2, ...}}

When ``ATOMIC_FAUX_LOG`` is set, each call appends ``{"model", "context", "options"}`` to it.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

from atomic_host.contract.providers import StreamOptions
from atomic_host.kit.llm.stream import AssistantStream, Event

PROVIDER_ID = "faux"
MODEL_ID = "faux-1"
API = "faux"
CHUNK_SIZES = (12, 16, 20)  # 3–5 tokens of 4 chars, rotated so runs are reproducible
NO_SCRIPT = (
    "No more faux responses queued: ATOMIC_FAUX_SCRIPT is not set "
    '(point it at a JSONL file with one reply per line, e.g. "hello")'
)
# The faux-1 model dict lives in builtin_plugins.providers.faux_model() (no import cost there).


class FauxProvider:
    """The script queue and call bookkeeping (one process-wide instance: :data:`faux`)."""

    def __init__(self) -> None:
        self.queue: deque[Any] = deque()
        self.call_count = 0
        self.last_context: dict[str, Any] | None = None
        self.last_options: dict[str, Any] | None = None
        self._file_consumed: dict[str, int] = {}

    def push(self, *steps: Any) -> None:
        """Queue steps (strings or step dicts) for the next calls."""
        self.queue.extend(steps)

    def reset(self) -> None:
        """Forget queued steps, consumed file lines and counters."""
        self.queue.clear()
        self.call_count = 0
        self.last_context = self.last_options = None
        self._file_consumed.clear()

    def pending_count(self) -> int:
        """Steps still queued in-process plus unread lines of the script file."""
        path = os.environ.get("ATOMIC_FAUX_SCRIPT")
        unread = len(_read_lines(path)) - self._file_consumed.get(path, 0) if path else 0
        return len(self.queue) + max(0, unread)

    def next_step(self) -> Any:
        """The next step, or None when the script is exhausted; raises ValueError on a bad line."""
        if self.queue:
            return self.queue.popleft()
        path = os.environ.get("ATOMIC_FAUX_SCRIPT")
        if not path:
            return None
        lines = _read_lines(path)
        done = self._file_consumed.get(path, 0)
        if done >= len(lines):
            return None
        self._file_consumed[path] = done + 1
        try:
            return json.loads(lines[done])
        except ValueError as exc:
            raise ValueError(f"Invalid faux script line {done + 1} in {path}: {exc}") from exc


def _read_lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError:
        return []
    lines = text.split("\n")
    tail = lines.pop()  # text after the last newline: possibly a line still being written
    complete = [ln for ln in lines if ln.strip()]
    if tail.strip():
        try:
            json.loads(tail)
            complete.append(tail)
        except ValueError:
            pass
    return complete


faux = FauxProvider()
push = faux.push
reset = faux.reset


def _normalize(step: Any) -> dict[str, Any]:
    if isinstance(step, str):
        return {"content": [{"type": "text", "text": step}]}
    if not isinstance(step, dict):
        raise ValueError(f"faux step must be a string or an object, got {type(step).__name__}")
    content = step.get("content", [])
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    return {**step, "content": content}


def _chunks(text: str) -> list[str]:
    out, i, n = [], 0, 0
    while i < len(text):
        size = CHUNK_SIZES[n % len(CHUNK_SIZES)]
        out.append(text[i : i + size])
        i, n = i + size, n + 1
    return out


async def _pause(ms: float, signal: asyncio.Event | None) -> bool:
    """Sleep ``ms``; False when the abort signal fired first."""
    if signal is not None and signal.is_set():
        return False
    if ms <= 0:
        await asyncio.sleep(0)
        return not (signal is not None and signal.is_set())
    if signal is None:
        await asyncio.sleep(ms / 1000)
        return True
    try:
        await asyncio.wait_for(signal.wait(), ms / 1000)
        return False
    except TimeoutError:
        return True


def _log(model: dict[str, Any], context: dict[str, Any], options: StreamOptions) -> dict[str, Any]:
    opts = {
        "reasoning": options.reasoning,
        "max_tokens": options.max_tokens,
        "temperature": options.temperature,
        "session_id": options.session_id,
        "thinking_budgets": options.thinking_budgets,
        "headers": options.headers,
    }
    path = os.environ.get("ATOMIC_FAUX_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(
                json.dumps({"model": model.get("id"), "context": context, "options": opts}, default=str)
                + "\n"
            )
    return opts


async def stream(
    model: dict[str, Any], context: dict[str, Any], options: StreamOptions
) -> AsyncIterator[Event]:
    """Stream the next scripted step as neutral events (never raises)."""
    faux.call_count += 1
    out = AssistantStream(model, api=model.get("api") or API, provider=model.get("provider") or PROVIDER_ID)
    signal = options.signal
    try:
        faux.last_context = context
        faux.last_options = _log(model, context, options)
        raw = faux.next_step()
        if raw is None:
            yield out.error(NO_SCRIPT if not os.environ.get("ATOMIC_FAUX_SCRIPT") else "No more faux responses queued")
            return
        step = _normalize(raw)
    except Exception as exc:
        yield out.error(f"faux: {exc}")
        return
    if not await _pause(float(step.get("delayMs") or 0), signal):
        yield out.error("", aborted=True)
        return
    chunk_ms = float(step.get("chunkDelayMs") or 0)
    out.set_usage(input=-(-len(json.dumps(context, default=str)) // 4))
    yield out.start()
    output_chars = 0
    for n, block in enumerate(step["content"]):
        kind = block.get("type")
        if kind == "toolCall":
            idx, ev = out.toolcall_start(
                block.get("id") or f"faux_call_{faux.call_count}_{n}", block.get("name", "")
            )
            payload = json.dumps(block.get("arguments") or {})
            output_chars += len(payload) + len(block.get("name", ""))
        elif kind == "thinking":
            idx, ev = out.thinking_start()
            payload = block.get("thinking", "")
            output_chars += len(payload)
        else:
            idx, ev = out.text_start()
            payload = block.get("text", "")
            output_chars += len(payload)
        yield ev
        for piece in _chunks(payload):
            if not await _pause(chunk_ms, signal):
                yield out.error("", aborted=True)
                return
            if kind == "toolCall":
                yield out.toolcall_delta(idx, piece)
            elif kind == "thinking":
                yield out.thinking_delta(idx, piece)
            else:
                yield out.text_delta(idx, piece)
        yield out.end_block(idx)
    out.set_usage(output=-(-output_chars // 4))
    if step.get("usage"):
        out.set_usage(**{k: v for k, v in step["usage"].items() if k != "cost"})
    reason = step.get("stopReason") or ("toolUse" if out.has_tool_calls() else "stop")
    if reason in ("error", "aborted"):
        default = "Request was aborted" if reason == "aborted" else "faux error"
        yield out.error(step.get("errorMessage") or default, aborted=reason == "aborted")
    else:
        yield out.done(reason)
