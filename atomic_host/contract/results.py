"""What hooks return. ``None`` always means "no opinion"; anything else is one of these types.

Each hook's combining rule (``atomic_host.contract.hookspecs.DISPATCH_RULES``) says how several
plugins' results add up; ``atomic_host.plugins.dispatch`` applies it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol

from atomic_host.contract.records import field, record

if TYPE_CHECKING:
    import asyncio

    from atomic_host.contract.events import (
        BeforeAgentStartEvent,
        BeforeProviderRequestEvent,
        ContextEvent,
        InputEvent,
        MessageEndEvent,
        ToolCallEvent,
        ToolResultEvent,
    )


@record
class Cancel:
    """Return from ``session_before_switch`` / ``session_before_fork`` to cancel the operation."""

    reason: str | None = None


@record
class InputResult:
    """Result of an ``input`` hook: handled, or a transform of the text/images."""

    action: Literal[handled, transform]
    text: str | None = None
    images: list[dict[str, Any]] | None = None

    @classmethod
    def handled(cls) -> InputResult:
        return cls("handled")

    @classmethod
    def transform(cls, text: str, images: list[dict[str, Any]] | None = None) -> InputResult:
        return cls("transform", text, images)

    def apply(self, event: InputEvent) -> bool:
        """Apply a transform to ``event``; True when the input was handled."""
        if self.action == "handled":
            return True
        if self.text is not None:
            event.text = self.text
        if self.images is not None:
            event.images = self.images
        return False


@record
class ToolCallDecision:
    """Result of a ``tool_call`` hook: ``block`` refuses the call (the model gets an error result
    with ``reason``); ``terminate`` ends the run after this turn's tool batch (with or without
    blocking: no further model call; the queues stay as they are)."""

    block: bool = False
    reason: str | None = None
    terminate: bool = False

    @classmethod
    def failed_closed(cls, path: str, why: str) -> ToolCallDecision:
        """The block a fail-closed gate that failed stands for (``path``: its extension; ``why``)."""
        return cls(block=True, reason=f"Tool call blocked: the tool_call gate of {path} failed and fails closed: {why}")

    def apply(self, event: ToolCallEvent) -> bool:
        """Note ``terminate`` on ``event``; True when the call is blocked (the first block wins)."""
        if self.terminate:
            event.terminate = True
        return self.block


@record
class ToolPatch:
    """Result of a ``tool_result`` hook: the fields to replace (``None`` keeps the current value)."""

    content: list[dict[str, Any]] | None = None
    details: dict[str, Any] | None = None
    is_error: bool | None = None

    def apply(self, event: ToolResultEvent) -> bool:
        """Replace ``event.result`` by the patched result; never stops."""
        from atomic_host.contract.tools import ToolResult

        current = event.result
        event.result = ToolResult(
            current.content if self.content is None else self.content,
            current.details if self.details is None else self.details,
            current.is_error if self.is_error is None else self.is_error,
        )
        return False


@record
class AgentStartResult:
    """Result of a ``before_agent_start`` hook."""

    system_prompt: str | None = None
    """Replaces the system prompt of this run (the last plugin that sets one wins)."""
    messages: list[dict[str, Any]] = field(default_factory=list)
    """Custom messages (``customType``, ``content``, …) added after the user message, in call order."""

    def apply(self, event: BeforeAgentStartEvent) -> bool:
        """Record the override and the messages on ``event``; never stops."""
        if self.system_prompt is not None:
            event.system_prompt = self.system_prompt
        event.messages.extend(self.messages)
        return False


OnData = Callable[..., None]
"""``on_data(data, channel="stdout")``: one piece of a command's output (``bytes`` or ``str``;
``channel`` is ``"stdout"`` or ``"stderr"``)."""


class BashOperations(Protocol):
    """How to run a direct bash command somewhere else (a container, over ssh): return one from
    ``user_bash`` as ``BashResult(operations=...)`` and the host calls :meth:`exec` instead of
    starting a local shell. The host does the rest as for the local shell: it decodes, cleans
    (ANSI, ``\r``, control bytes) and masks what ``on_data`` gets, streams it as
    ``bash_execution_update`` deltas, keeps the truncated tail and the full-output log, answers
    the response and records the BashExecutionMessage."""

    async def exec(self, command: str, cwd: str, *, on_data: OnData, signal: asyncio.Event) -> int | None:
        """Run ``command`` (the ``shellCommandPrefix`` setting already prepended) in ``cwd``.

        Call ``on_data(data, channel)`` for each piece of output as it arrives, from the event
        loop's thread (other threads are handed over to it). Return the exit code, or None when it
        is unknown. When ``signal`` is set (``abort_bash``, the client going away) stop the command
        and return soon: after a grace second the host stops waiting (the task is cancelled) and
        answers ``cancelled``. An exception is reported as ``extension_error`` and fails the command.
        """
        ...


@record
class ContextResult:
    """Result of a ``context`` hook: the message list the model call uses instead (results chain)."""

    messages: list[dict[str, Any]]

    def apply(self, event: ContextEvent) -> bool:
        if not isinstance(self.messages, list) or not all(isinstance(m, dict) for m in self.messages):
            raise TypeError("ContextResult.messages must be a list of message dicts")
        event.messages = self.messages
        return False



@record
class ProviderPayload:
    """Result of a ``before_provider_request`` hook: the JSON body to send instead (results chain)."""

    payload: dict[str, Any]

    def apply(self, event: BeforeProviderRequestEvent) -> bool:
        if not isinstance(self.payload, dict):
            raise TypeError(f"ProviderPayload.payload must be a dict, not {type(self.payload).__name__}")
        event.payload = self.payload
        return False

@record
class MessageEndResult:
    """Result of a ``message_end`` hook: a replacement for the finished message, of the same role."""

    message: dict[str, Any]

    def apply(self, event: MessageEndEvent) -> bool:
        role = event.message.get("role")
        if not isinstance(self.message, dict) or self.message.get("role") != role:
            raise ValueError(f"MessageEndResult.message must be a message dict with role {role!r}")
        event.message = self.message
        return False


@record
class BashResult:
    """Result of a ``user_bash`` hook: the command's outcome, answered instead of running it
    (recorded like a command the host ran), or — with ``operations`` — how to run it."""

    output: str = ""
    exit_code: int | None = None
    cancelled: bool = False
    truncated: bool = False
    operations: BashOperations | None = None
    """Run the command through these instead of the local shell; the other fields are then unused."""


@record
class CompactResult:
    """Result of ``session_before_compact``: the compacted text, supplied instead of the strategy's planning."""

    compacted_text: str


@record
class Compaction:
    """Result of a ``compact`` hook: the compaction boundary to write.

    The host appends the ``compaction`` entry (``summary``, ``firstKeptEntryId``, ``tokensBefore``,
    ``details`` = ``strategy``, ``promptVersion``, ``rung``, ``parameters``, ``stats``,
    ``plannerModel``?, ``backupPath``? and ``details``' own keys; plus ``entry``'s fields), writes the
    backup and answers ``compact`` / ``compaction_end`` with the wire result (``compactedText``,
    ``firstKeptEntryId``, ``tokensBefore``, ``promptVersion``, ``parameters``, ``rung``, ``stats``,
    ``plannerModel``?, ``backupPath``?). What a strategy leaves out, the host fills in.
    """

    summary: str
    """The text that stands for the compacted region (``compactedText`` on the wire)."""
    first_kept_entry_id: str | None = None
    """The first entry of the branch kept verbatim after the boundary; None compacts it all."""
    rung: str = "extension"
    """How it was made (the built-in: planned | fresh | extension)."""
    prompt_version: int = 0
    """The strategy's prompt version (the built-in's is 3); 0: none."""
    parameters: dict[str, Any] | None = None
    """``{"compression_ratio", "preserve_recent", "query"}``; None: the ``compaction.*`` settings,
    normalised (``atomic_host.kit.compaction.wire_parameters``)."""
    stats: dict[str, Any] | None = None
    """The ``stats`` object (``atomic_host.kit.compaction.stats``); None: the host counts the
    summary's lines as kept, nothing deleted, and the tokens before and after."""
    planner_model: dict[str, Any] | None = None
    """``{"provider", "id", "thinkingLevel"?}`` when a ``fallbackModels`` entry wrote it."""
    details: dict[str, Any] = field(default_factory=dict)
    """More keys of the entry's ``details``. ``details["strategy"]`` is the host's: the boundary
    kind the session format reads back (``verbatim-lines``: the summary replaces the region); a
    strategy that puts its own name there finds it in ``details["strategyName"]``.
    ``backend: "summary"`` introduces the summary to the model as a summary instead of retained lines."""
    entry: dict[str, Any] = field(default_factory=dict)
    """More top-level fields of the entry (the built-in: ``fromHook``)."""


@record
class Failure:
    """Result of a strategy hook (``compact``, ``summarize``) whose work failed.

    ``message`` is what the client is told (``Compaction failed: <message>``, or the
    ``navigate_tree`` error). ``nothing_to_do``: there was nothing to compact — a manual ``compact``
    answers the bare message, an automatic one ends quietly.
    """

    message: str
    nothing_to_do: bool = False


@record
class Summary:
    """Result of a ``summarize`` hook: the summary text (empty = nothing to store)."""

    text: str
    usage: dict[str, Any] | None = None
    """The usage of the model call that wrote it, stored with the entry."""


@record
class RecoverResult:
    """Result of a ``session_recover`` hook: what the plugin restored, for the recovery report."""

    notices: list[str] = field(default_factory=list)
    """Lines for the report's ``notices`` (e.g. "Resumed workflow review from stage 2.")."""
    completions: int = 0
    """Undelivered background results the plugin appended to the session."""
    resumed: int = 0
    """Background runs (workflow runs, workers) the plugin resumed."""
