"""``RunResult``: the events of one prompt's run and what they add up to."""

from __future__ import annotations

from typing import Any

from atomic_host.client.types import AgentMessage, AssistantMessage, Cost, Usage, parse_agent_message


class RunResult(list):  # type: ignore[type-arg]
    """The typed events of one run (a list, oldest first) and its outcome: the final message and its
    text, how it stopped, the tokens and dollars it used, how long it took and in which session.

    The names follow print mode's ``--output-format json`` result (and claude-agent-sdk's
    ``ResultMessage``): ``text``, ``is_error``, ``num_turns``, ``duration_ms``, ``stop_reason``,
    ``total_cost_usd``, ``usage``, ``session_id``."""

    def __init__(
        self,
        events: list[Any] = (),  # type: ignore[assignment]
        *,
        disposition: str | None = None,
        duration_ms: int | None = None,
        session_id: str | None = None,
    ) -> None:
        super().__init__(events)
        self.disposition = disposition
        """How the host took the prompt: ``started``, ``queued`` or ``handled`` (no run)."""
        self.duration_ms = duration_ms
        """Wall time from sending the prompt to the run settling, in milliseconds."""
        self.session_id = session_id
        """The session the run was recorded in."""

    @property
    def assistant_messages(self) -> list[AssistantMessage]:
        """Every finished assistant message of the run (one per turn)."""
        out = []
        for event in self:
            message = event.get("message") if event.get("type") == "message_end" else None
            if isinstance(message, dict) and message.get("role") == "assistant":
                out.append(AssistantMessage(message))
        return out

    @property
    def messages(self) -> list[AgentMessage]:
        """The messages the run added (``agent_end``; with a retry or a follow-up, every run's)."""
        return [
            parse_agent_message(m) for e in self if e.get("type") == "agent_end" for m in e.get("messages") or []
        ]

    @property
    def final_message(self) -> AssistantMessage | None:
        """The last assistant message of the run, if any."""
        messages = self.assistant_messages
        return messages[-1] if messages else None

    @property
    def stop_reason(self) -> str | None:
        """Why the final message ended: ``stop``, ``length``, ``toolUse``, ``error``, ``aborted``."""
        message = self.final_message
        return None if message is None else message.get("stopReason")

    @property
    def error(self) -> str | None:
        """The error the run ended with (provider error, abort), else None."""
        message = self.final_message
        if message is None or message.get("stopReason") not in ("error", "aborted"):
            return None
        return str(message.get("errorMessage") or message.get("stopReason"))

    @property
    def ok(self) -> bool:
        """The run produced a reply and did not end in error."""
        return self.final_message is not None and self.error is None

    @property
    def is_error(self) -> bool:
        """A run that started and did not end well (print mode's ``is_error``)."""
        return self.disposition != "handled" and not self.ok

    @property
    def text(self) -> str:
        """The final assistant message's text."""
        message = self.final_message or {}
        return "".join(b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text")

    @property
    def num_turns(self) -> int:
        """How many model calls the run made."""
        return len(self.assistant_messages)

    @property
    def usage(self) -> Usage:
        """Tokens and dollars summed over the run's assistant messages."""
        keys = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
        tokens = dict.fromkeys(keys, 0)
        cost = dict.fromkeys(("input", "output", "cacheRead", "cacheWrite", "total"), 0.0)
        for message in self.assistant_messages:
            usage = message.get("usage") or {}
            for key in keys:
                tokens[key] += int(usage.get(key) or 0)
            for key in cost:
                cost[key] += float((usage.get("cost") or {}).get(key) or 0.0)
        return Usage({**tokens, "cost": Cost(cost)})

    @property
    def total_cost_usd(self) -> float:
        """What the run cost, in dollars."""
        return float(self.usage.cost.total)

    def __repr__(self) -> str:
        return (
            f"RunResult({len(self)} events, stop_reason={self.stop_reason!r}, text={self.text[:60]!r}, "
            f"duration_ms={self.duration_ms}, session_id={self.session_id!r})"
        )
