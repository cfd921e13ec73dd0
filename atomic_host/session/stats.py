"""get_session_stats: token and cost totals over the whole file, and the context estimate."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from atomic_host.kit.sessions.tree import Session


class StatsSource(Protocol):
    """What the stats read of a running session: its entries, its model and its LLM context."""

    session: Session
    model: dict[str, Any] | None
    messages: list[dict[str, Any]]


def _chars(message: dict[str, Any]) -> int:
    # lazy: kit.llm.context (and the kit.llm package) loads only when a message is measured
    from atomic_host.kit.llm.context import message_chars

    n = message_chars(message)
    if message.get("role") == "bashExecution":
        n += len(message.get("command", "")) + len(message.get("output", ""))
    return n


def usage_tokens(usage: dict[str, Any], _api: str = "") -> int:
    """The tokens one reply's usage accounts for: the adapter's ``totalTokens``, or the four-way sum
    when it has none. (Quirks of a wire API's accounting are the adapter's: it sets ``totalTokens``.
    ``_api`` is ignored; it stays until the engine's callers stop passing it.)"""
    total = usage.get("totalTokens")
    if total:
        return total
    return usage.get("input", 0) + usage.get("output", 0) + usage.get("cacheRead", 0) + usage.get("cacheWrite", 0)


def context_estimate(messages: list[dict[str, Any]]) -> int:
    """Last usable assistant usage + chars/4 of everything after it (semantics §4.6)."""
    anchor, tokens = -1, 0
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.get("role") == "assistant" and m.get("stopReason") not in ("error", "aborted"):
            total = usage_tokens(m.get("usage") or {})
            if total > 0:
                anchor, tokens = i, total
                break
    for m in messages[anchor + 1 :]:
        tokens += math.ceil(_chars(m) / 4)
    return tokens


def _unmeasured_since_compaction(messages: list[dict[str, Any]]) -> bool:
    """The context starts at a compaction boundary and no reply since reported usable usage: its
    size is not known yet (an estimate would look measured), so ``contextUsage`` says null."""
    if not messages or messages[0].get("role") != "custom" or messages[0].get("customType") != "compaction":
        return False
    return not any(
        m.get("role") == "assistant"
        and m.get("stopReason") not in ("error", "aborted")
        and usage_tokens(m.get("usage") or {}) > 0
        for m in messages
    )


class Totals:
    """The whole-session counts and usage sums of ``get_session_stats``, as a session view
    (``Session.view``): each entry is added once, so a stats read costs what was appended since."""

    def __init__(self) -> None:
        self.counts = {"user": 0, "assistant": 0, "toolResult": 0}
        self.tool_calls = self.total = 0
        self.tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
        self.cost: Any = 0.0
        self.latest: dict[str, Any] | None = None

    def add(self, entry: dict[str, Any]) -> None:
        # Everything is computed before anything is stored: an entry that raises (a content block
        # that is not an object) leaves the totals as they were, and raises again on the next read.
        usage = None
        role = None
        tool_calls = 0
        counted = False
        message = entry.get("message")
        m: dict[str, Any] = message if isinstance(message, dict) else {}
        # a hand-made message that is not an object is no message (as Session.stats and the context see it)
        is_message = entry.get("type") == "message" and m is message
        if is_message:
            role = m.get("role")
            counted = role in self.counts
            if role == "assistant":
                tool_calls = sum(1 for b in m.get("content") or [] if b.get("type") == "toolCall")
                usage = m.get("usage")
        elif entry.get("type") in ("branch_summary", "session_summary"):
            usage = entry.get("usage")
        tokens, cost = self.tokens, self.cost
        if usage:
            # sums in locals, no dict per entry: allocations would wake the GC over a long session
            t_in = tokens["input"] + (usage.get("input", 0) or 0)
            t_out = tokens["output"] + (usage.get("output", 0) or 0)
            t_read = tokens["cacheRead"] + (usage.get("cacheRead", 0) or 0)
            t_write = tokens["cacheWrite"] + (usage.get("cacheWrite", 0) or 0)
            cost += (usage.get("cost") or {}).get("total", 0) or 0
        if is_message:
            self.total += 1
            if counted:
                self.counts[role] += 1  # type: ignore[index]
            if role == "assistant":
                self.tool_calls += tool_calls
                self.latest = usage
        if usage:
            tokens["input"], tokens["output"], tokens["cacheRead"], tokens["cacheWrite"] = t_in, t_out, t_read, t_write
        self.cost = cost


def session_stats(agent: StatsSource) -> dict[str, Any]:
    session = agent.session
    totals = session.view(Totals)
    counts, tokens, latest = totals.counts, totals.tokens, totals.latest
    tool_calls, total, cost = totals.tool_calls, totals.total, totals.cost
    data: dict[str, Any] = {
        "sessionId": session.id,
        "userMessages": counts["user"],
        "assistantMessages": counts["assistant"],
        "toolCalls": tool_calls,
        "toolResults": counts["toolResult"],
        "totalMessages": total,
        "tokens": {**tokens, "total": sum(tokens.values())},
        "cost": cost,
    }
    if session.location:
        data["sessionFile"] = session.location
    window = (agent.model or {}).get("contextWindow") or 0
    if window > 0:
        messages = agent.messages
        used = None if _unmeasured_since_compaction(messages) else context_estimate(messages)
        data["contextUsage"] = {
            "tokens": used,
            "contextWindow": window,
            "percent": None if used is None else round(100 * used / window, 1),
        }
    if latest is not None:
        data["latestAssistantUsage"] = latest
    return data
