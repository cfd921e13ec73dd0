"""``RunPorts``: what one agent run needs from whoever runs it — the narrow interface between the
loop (this package) and the engine's :class:`~atomic_host.engine.agent_session.AgentSession`.

The loop never sees the session, the runtime or the transport: it emits events, records messages,
polls the queues, asks for the provider context and stream, and runs tools through these ports.
Unit tests run the loop in process against a small fake that implements them
(``tests/unit/agent``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import asyncio

    from atomic_host.contract.providers import StreamOptions
    from atomic_host.contract.tools import Tool, ToolContext, ToolResult
    from atomic_host.plugins.dispatch import Dispatcher
    from atomic_host.plugins.registry import ToolRegistry

StreamFn = Callable[[dict[str, Any], dict[str, Any], "StreamOptions"], AsyncIterator[dict[str, Any]]]
"""A provider's ``stream(model, context, options)``: assistant-message events (``ApiImpl.stream``)."""


class ToolPorts(Protocol):
    """What executing tool calls needs: the tool table, the hooks, a context per call."""

    tools: ToolRegistry
    hooks: Dispatcher
    abort_signal: asyncio.Event

    def emit(self, event: dict[str, Any], line: str | None = None) -> None: ...

    def model_tools(self) -> list[Tool]:
        """The tools the model sees in this run (only these may be called)."""
        ...

    def tool_context(
        self,
        tool: Tool,
        call_id: str,
        signal: asyncio.Event,
        on_update: Callable[[ToolResult], None],
        call_tool: Callable[[str, dict[str, Any]], Any],
    ) -> ToolContext:
        """The :class:`ToolContext` handed to ``tool``'s handler for one call."""
        ...

    # for oversized results (agent/oversized.py ResultOwner)
    @property
    def session(self) -> Any: ...

    def temp_dir(self) -> str | None: ...


class RunPorts(ToolPorts, Protocol):
    """Everything :func:`atomic_host.agent.loop.run_agent` uses."""

    model: dict[str, Any] | None
    in_provider_stream: bool
    """True while a provider stream is open (abort may then cancel the stream)."""
    cancelled_for_abort: bool
    """Set by abort before it cancels a stream that ignored the signal."""

    def record_message(self, message: dict[str, Any]) -> None:
        """Persist a finished message and add it to the context."""
        ...

    async def deliver_message(self, message: dict[str, Any]) -> dict[str, Any]:
        """A user/custom message enters the run (persisted and stored, message events, taken off
        its queue); returns it as saved."""
        ...

    async def saved(self) -> None:
        """Until every entry recorded so far is stored (returns early once the run is aborted;
        raises ``OSError`` when a write failed)."""
        ...

    def end_message(self, message: dict[str, Any]) -> dict[str, Any]:
        """A message is finished: the ``message_end`` hooks may replace it; returns what to emit."""
        ...

    def note_assistant(self, message: dict[str, Any]) -> None:
        """An assistant reply ended (retry and fallback bookkeeping)."""
        ...

    async def prepare_next_call(self) -> bool:
        """After a turn's tool results, before the run's next model call: compact the context when
        it grew over the threshold (mid-turn compaction). False ends the run: the context does not
        fit the model even compacted, and the next request is not sent."""
        ...

    def poll_steering(self) -> list[dict[str, Any]]: ...

    def poll_follow_up(self) -> list[dict[str, Any]]: ...

    async def llm_context(self, system_prompt: str | None) -> dict[str, Any]:
        """The provider context of the next model call (system prompt, messages, tools)."""
        ...

    def stream_options(self) -> StreamOptions: ...

    def stream_fn(self, api: str) -> StreamFn | None:
        """The registered stream function of a wire API, or None."""
        ...
