"""One record (a cheap dataclass, see ``records``) per hook event: what a hook's ``event`` argument carries.

Fields are only ever added (with defaults), never removed or renamed, so old plugins keep working.
Events a hook may edit say so (``input``'s text, ``tool_call``'s arguments); the others are for reading.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from atomic_host.contract.records import field, record

if TYPE_CHECKING:
    import asyncio

    from atomic_host.contract.tools import ToolResult

WireEvent = dict[str, Any]
"""An agent event exactly as it is written to the client (``on_event``): a JSON object with ``type``."""


@record
class SessionStartEvent:
    """``session_start``: a session became active."""

    reason: str
    """startup | new | resume | fork | reload"""
    previous_session_file: str | None = None
    """The location of the session it replaced, if any."""


@record
class SessionShutdownEvent:
    """``session_shutdown``: the active session is about to be replaced, or the host is exiting."""

    reason: str


@record
class SessionBeforeSwitchEvent:
    """``session_before_switch``: before ``new_session`` / ``switch_session`` / ``import_session``."""

    reason: str
    """new | resume"""
    target_session_file: str | None = None
    """The session (or file) being opened, for ``resume``."""


@record
class SessionBeforeForkEvent:
    """``session_before_fork``: before ``fork`` (position ``before``) or ``clone`` (position ``at``)."""

    entry_id: str
    position: str
    """before | at"""


@record
class SessionBeforeTreeEvent:
    """``session_before_tree``: before ``navigate_tree`` moves the leaf (a ``Cancel`` stops it)."""

    target_id: str
    """The entry the client navigates to."""
    old_leaf_id: str | None
    """The leaf before the move."""
    new_leaf_id: str | None
    """Where the leaf will be: the target, or its parent when the target is a user prompt to re-edit."""
    summarize: bool = False
    """Whether a summary of the abandoned path was asked for."""
    custom_instructions: str | None = None
    replace_instructions: bool = False
    label: str | None = None
    """The label the target gets, if one was asked for."""


@record
class SessionTreeEvent:
    """``session_tree``: ``navigate_tree`` moved the leaf."""

    target_id: str
    old_leaf_id: str | None
    new_leaf_id: str | None
    summary_entry: dict[str, Any] | None = None
    """The ``branch_summary`` entry appended for the abandoned path, if any."""


@record
class SessionInfoChangedEvent:
    """``session_info_changed``: the session's name or an entry's label changed."""

    kind: str
    """name | label"""
    name: str | None = None
    """The new session name (``kind == "name"``)."""
    entry_id: str | None = None
    """The labelled entry (``kind == "label"``)."""
    label: str | None = None
    """The entry's new label; None when it was cleared."""


@record
class InputEvent:
    """``input``: user input before the host acts on it; ``text`` and ``images`` may be replaced by
    the results (``InputResult.transform``)."""

    text: str
    images: list[dict[str, Any]] | None = None
    source: str = "rpc"
    """rpc | extension"""
    kind: str = "prompt"
    """prompt | steer | follow_up"""


@record
class BeforeAgentStartEvent:
    """``before_agent_start``: a run is about to start for ``prompt``."""

    prompt: str
    images: list[dict[str, Any]] | None = None
    system_prompt: str | None = None
    """The system prompt override so far (set by an earlier plugin's result), or None."""
    messages: list[dict[str, Any]] = field(default_factory=list)
    """Custom messages earlier plugins added after the user message."""


@record
class SystemPromptEvent:
    """``system_prompt``: the system prompt of a model call is being built."""

    tools: list[str] = field(default_factory=list)
    """Names of the tools the model sees in this call."""


@record
class ToolCallEvent:
    """``tool_call``: a tool call about to run; mutate ``input`` to rewrite the arguments."""

    tool_name: str
    tool_call_id: str
    input: dict[str, Any]
    terminate: bool = False
    """Set when a plugin's decision asked to end the run after this tool batch."""


@record
class ToolResultEvent:
    """``tool_result``: a tool's result before the model sees it (patches from earlier plugins applied)."""

    tool_name: str
    tool_call_id: str
    input: dict[str, Any]
    result: ToolResult


@record
class ContextEvent:
    """``context``: the messages of the next model call, in the host's message shape (user,
    assistant, toolResult, custom, …), before they are converted for the provider. Earlier
    plugins' results are applied: ``messages`` is what this plugin would change."""

    messages: list[dict[str, Any]]
    model: dict[str, Any] | None = None
    """The model the call goes to (``provider``, ``id``, ``api``, …)."""
    signal: asyncio.Event | None = None
    """Set when the run is aborted: a hook that waits for something stops waiting then."""



@record
class BeforeProviderRequestEvent:
    """``before_provider_request``: the JSON body of a provider request, built by the adapter, just
    before it is sent. Mutate ``payload`` in place, or return ``ProviderPayload(new)`` to replace it
    (results chain: the next plugin sees the replacement)."""

    payload: dict[str, Any]
    model: dict[str, Any]
    """The model the request is for (``provider``, ``id``, ``api``, ``baseUrl``, …)."""
    url: str


@record
class BeforeProviderHeadersEvent:
    """``before_provider_headers``: the HTTP headers of a provider request (lower-case names, the
    API key's among them), after the payload hooks. Mutate ``headers``: set a value to add or
    override a header, set it to None (or delete the key) to leave it out."""

    headers: dict[str, str | None]
    model: dict[str, Any]
    url: str


@record
class AfterProviderResponseEvent:
    """``after_provider_response``: a provider answered (each attempt, the failed ones too), before
    its body is read."""

    status: int
    headers: dict[str, str]
    """The response headers, lower-case names."""
    elapsed_ms: float
    """From sending the request to the response head."""
    model: dict[str, Any]
    url: str
    attempt: int = 0
    """0 for the first request, 1, 2, … for transport retries (``retry.provider.maxRetries``)."""

@record
class MessageEndEvent:
    """``message_end``: a message is finished (user, custom, assistant, toolResult), before it is
    sent in ``message_end`` and saved. ``message`` has earlier plugins' replacements applied."""

    message: dict[str, Any]


@record
class ModelSelectEvent:
    """``model_select``: the session's model changed."""

    model: dict[str, Any]
    previous_model: dict[str, Any] | None
    source: str
    """set | cycle | fallback | restore (as in ``model_changed``)"""


@record
class ThinkingLevelSelectEvent:
    """``thinking_level_select``: the session's thinking level changed."""

    level: str
    previous_level: str


@record
class UserBashEvent:
    """``user_bash``: a direct ``bash`` / ``user_bash`` command from the client."""

    command: str


@record
class SessionCompactEvent:
    """``session_compact``: a compaction boundary was written."""

    reason: str
    """manual | threshold | overflow"""
    result: dict[str, Any]
    """The compaction result, as sent in ``compaction_end``."""


@record
class SessionBeforeCompactEvent:
    """``session_before_compact``: compaction is about to run."""

    reason: str
    """manual | threshold | overflow"""
    lines: list[str] = field(default_factory=list)
    """The serialised conversation the built-in strategy would summarise."""
    protected: list[int] = field(default_factory=list)
    """1-based numbers of the lines the built-in strategy keeps verbatim."""
    first_kept_entry_id: str | None = None
    tokens_before: int = 0
    parameters: dict[str, Any] = field(default_factory=dict)
    branch_entries: list[dict[str, Any]] = field(default_factory=list)


@record
class Requester:
    """One model a strategy hook (``compact``, ``summarize``) may ask, as the host offers it.

    ``await request(context)`` sends one tool-less request (``context`` as for a provider:
    ``{"systemPrompt", "messages", "tools"}``) and returns the final assistant message; it never
    raises for a provider failure (``stopReason`` "error" then, with ``errorMessage``). For
    compaction the host retries transient errors with the session's retry settings and reports
    them as ``summarization_retry_*`` events; ``abort_compaction`` cancels the request.
    """

    model: dict[str, Any]
    """The full model dict (``provider``, ``id``, ``contextWindow``, …)."""
    request: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
    thinking_level: str | None = None
    """The level a ``fallbackModels`` entry names, else None (the session's level applies)."""
    fallback: bool = False
    """A ``fallbackModels`` entry, not the session's model."""


@record
class CompactEvent:
    """``compact``: compact the active branch. The host writes what the winning result says."""

    reason: str
    """manual | threshold | overflow"""
    branch_entries: list[dict[str, Any]] = field(default_factory=list)
    """The active branch, root to leaf (for ``overflow`` without the reply that overflowed)."""
    context_messages: list[dict[str, Any]] = field(default_factory=list)
    """The context the model sees now (after the last boundary), likewise without that reply."""
    tokens_before: int = 0
    """The host's estimate of the current context, in tokens."""
    context_window: int = 0
    """The session model's context window (0: unknown)."""
    requesters: list[Requester] = field(default_factory=list)
    """Who may write it: the session's model first, then each usable ``fallbackModels`` entry."""
    before_compact: Callable[..., Awaitable[Any]] | None = None
    """``await event.before_compact(lines=, protected=, first_kept_entry_id=, parameters=)`` runs the
    ``session_before_compact`` hooks with the strategy's preparation and returns their decision
    (``Cancel``, ``CompactResult`` or None; results imports this module, so not typed here). A
    strategy that never calls it gets it called by the host before the boundary is written."""
    mid_turn: bool = False
    """True after a turn's tool results, before the run's next model call: the turn cannot go on
    without the boundary, so a strategy should not give up (the built-in falls back to deleting the
    whole region, as for ``overflow``)."""


@record
class SummarizeEvent:
    """``summarize``: write a summary of some entries of the session."""

    kind: str
    """session (the one-line background summary of the session) | branch (the branch
    ``navigate_tree`` leaves, with ``summarize: true``)"""
    entries: list[dict[str, Any]] = field(default_factory=list)
    """The entries to summarise: the active branch, or the abandoned one (common ancestor excluded)."""
    messages: list[dict[str, Any]] = field(default_factory=list)
    """Their context messages, as the model would see them."""
    instructions: str | None = None
    """``navigate_tree``'s ``customInstructions``."""
    replace_instructions: bool = False
    """``replaceInstructions``: the instructions replace the default prompt instead of adding to it."""
    requester: Requester | None = None
    """The session's model."""


@record
class SessionRecoverEvent:
    """``session_recover``: ``start_pending_recovery`` runs for the active session."""

    reason: str
    """startup | resume | workflow_stage_resume (``resume`` when the client named none)"""
    session_id: str
    session_file: str | None = None


EVENT_TYPES: dict[str, type] = {
    "session_start": SessionStartEvent,
    "session_shutdown": SessionShutdownEvent,
    "session_before_switch": SessionBeforeSwitchEvent,
    "session_before_fork": SessionBeforeForkEvent,
    "session_before_tree": SessionBeforeTreeEvent,
    "session_tree": SessionTreeEvent,
    "session_info_changed": SessionInfoChangedEvent,
    "input": InputEvent,
    "before_agent_start": BeforeAgentStartEvent,
    "system_prompt": SystemPromptEvent,
    "tool_call": ToolCallEvent,
    "tool_result": ToolResultEvent,
    "context": ContextEvent,
    "message_end": MessageEndEvent,
    "before_provider_request": BeforeProviderRequestEvent,
    "before_provider_headers": BeforeProviderHeadersEvent,
    "after_provider_response": AfterProviderResponseEvent,
    "model_select": ModelSelectEvent,
    "thinking_level_select": ThinkingLevelSelectEvent,
    "user_bash": UserBashEvent,
    "session_compact": SessionCompactEvent,
    "session_before_compact": SessionBeforeCompactEvent,
    "session_recover": SessionRecoverEvent,
    "compact": CompactEvent,
    "summarize": SummarizeEvent,
}
"""The event class of each hook that takes an ``event`` object (``on_event`` takes the wire dict)."""
