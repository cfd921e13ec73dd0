"""Every event the host prints, and ``validate_output_line`` for any output record.

Events carry no ``id`` except ``bash_execution_update`` (the originating bash request id).
Clients ignore unknown event types; the validator does not, so the host's output stays honest.
"""

from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError

from atomic_host.core.jsonfast import loads_strict
from atomic_host.core.protocol._base import JsonScalar, WireModel
from atomic_host.core.protocol.commands import ThinkingLevel
from atomic_host.core.protocol.messages import AgentMessage, ToolCall, ToolResultMessage, Usage, UserBlock
from atomic_host.core.protocol.model import Model
from atomic_host.core.protocol.responses import (
    RESPONSE_DATA,
    CompactionResult,
    ErrorResponse,
    Response,
    SuccessResponse,
)

# --- assistant message stream (message_update.assistantMessageEvent) -------------------------


class StartDelta(WireModel):
    type: Literal["start"] = "start"


class TextStart(WireModel):
    type: Literal["text_start"] = "text_start"
    content_index: int


class TextDelta(WireModel):
    type: Literal["text_delta"] = "text_delta"
    content_index: int
    delta: str


class TextEnd(WireModel):
    type: Literal["text_end"] = "text_end"
    content_index: int
    content: str


class ThinkingStart(WireModel):
    type: Literal["thinking_start"] = "thinking_start"
    content_index: int


class ThinkingDelta(WireModel):
    type: Literal["thinking_delta"] = "thinking_delta"
    content_index: int
    delta: str


class ThinkingEnd(WireModel):
    type: Literal["thinking_end"] = "thinking_end"
    content_index: int
    content: str


class ToolCallStart(WireModel):
    type: Literal["toolcall_start"] = "toolcall_start"
    content_index: int


class ToolCallDelta(WireModel):
    type: Literal["toolcall_delta"] = "toolcall_delta"
    content_index: int
    delta: str


class ToolCallEnd(WireModel):
    type: Literal["toolcall_end"] = "toolcall_end"
    content_index: int
    tool_call: ToolCall


class DoneDelta(WireModel):
    type: Literal["done"] = "done"
    reason: Literal["stop", "length", "toolUse"]


class ErrorDelta(WireModel):
    type: Literal["error"] = "error"
    reason: Literal["aborted", "error"]


AssistantMessageEvent = Annotated[
    StartDelta | TextStart | TextDelta | TextEnd | ThinkingStart | ThinkingDelta | ThinkingEnd
    | ToolCallStart | ToolCallDelta | ToolCallEnd | DoneDelta | ErrorDelta,
    Field(discriminator="type"),
]  # fmt: skip
"""One streaming delta; the wire form has no ``partial``."""

# --- agent loop ------------------------------------------------------------------------------


class AgentStartEvent(WireModel):
    type: Literal["agent_start"] = "agent_start"


class AgentEndEvent(WireModel):
    """All messages generated during this run."""

    type: Literal["agent_end"] = "agent_end"
    messages: list[AgentMessage]


class AgentSettledEvent(WireModel):
    """Nothing automatic (retry, compaction, queue) is left after a run."""

    type: Literal["agent_settled"] = "agent_settled"


class TurnStartEvent(WireModel):
    type: Literal["turn_start"] = "turn_start"


class TurnEndEvent(WireModel):
    type: Literal["turn_end"] = "turn_end"
    message: AgentMessage
    tool_results: list[ToolResultMessage]


class MessageStartEvent(WireModel):
    type: Literal["message_start"] = "message_start"
    message: AgentMessage


class MessageUpdateEvent(WireModel):
    """A streaming delta plus cumulative usage; ``endTurn`` only when the provider reported one."""

    type: Literal["message_update"] = "message_update"
    usage: Usage
    assistant_message_event: AssistantMessageEvent
    end_turn: bool | None = None


class MessageEndEvent(WireModel):
    type: Literal["message_end"] = "message_end"
    message: AgentMessage


class ToolResultPayload(WireModel):
    """``{content, details}`` of a tool result (partial or final)."""

    content: list[UserBlock]
    details: Any = None


class ToolExecutionStartEvent(WireModel):
    type: Literal["tool_execution_start"] = "tool_execution_start"
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]


class ToolExecutionUpdateEvent(WireModel):
    """``partialResult`` is the accumulated output so far, not a delta."""

    type: Literal["tool_execution_update"] = "tool_execution_update"
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    partial_result: ToolResultPayload


class ToolExecutionEndEvent(WireModel):
    type: Literal["tool_execution_end"] = "tool_execution_end"
    tool_call_id: str
    tool_name: str
    result: ToolResultPayload
    is_error: bool


class BashExecutionUpdateEvent(WireModel):
    """A direct-``bash`` output delta, correlated by the request ``id``."""

    type: Literal["bash_execution_update"] = "bash_execution_update"
    id: JsonScalar = None
    channel: Literal["stdout", "stderr"]
    delta: str


class QueueUpdateEvent(WireModel):
    type: Literal["queue_update"] = "queue_update"
    steering: list[str]
    follow_up: list[str]


# --- compaction and retry --------------------------------------------------------------------

CompactionReason = Literal["manual", "threshold", "overflow"]


class CompactionStartEvent(WireModel):
    """``midTurn``: after a turn's tool results, before the run's next model call."""

    type: Literal["compaction_start"] = "compaction_start"
    reason: CompactionReason
    mid_turn: bool | None = None


class CompactionEndEvent(WireModel):
    """``result`` null when aborted or failed; ``result`` and ``errorMessage`` are independent."""

    type: Literal["compaction_end"] = "compaction_end"
    reason: CompactionReason
    result: CompactionResult | None
    aborted: bool
    will_retry: bool
    error_message: str | None = None
    unresolved_overflow: bool | None = None
    mid_turn: bool | None = None


class AutoRetryStartEvent(WireModel):
    type: Literal["auto_retry_start"] = "auto_retry_start"
    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str


class AutoRetryEndEvent(WireModel):
    type: Literal["auto_retry_end"] = "auto_retry_end"
    success: bool
    attempt: int | None = None
    final_error: str | None = None


class SummarizationRetryScheduledEvent(WireModel):
    type: Literal["summarization_retry_scheduled"] = "summarization_retry_scheduled"
    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str


class SummarizationRetryAttemptStartEvent(WireModel):
    type: Literal["summarization_retry_attempt_start"] = "summarization_retry_attempt_start"
    source: Literal["compaction", "branchSummary"]
    reason: CompactionReason | None = None


class SummarizationRetryFinishedEvent(WireModel):
    type: Literal["summarization_retry_finished"] = "summarization_retry_finished"


# --- extensions, models, session -------------------------------------------------------------


class ExtensionErrorEvent(WireModel):
    type: Literal["extension_error"] = "extension_error"
    extension_path: str
    event: str
    error: str


class ModelChangedEvent(WireModel):
    """``source`` says why (set, cycle, restore, fallback, ...)."""

    type: Literal["model_changed"] = "model_changed"
    model: Model | None
    previous_model: Model | None = None
    source: str


class ModelFallbackStartEvent(WireModel):
    type: Literal["model_fallback_start"] = "model_fallback_start"


class ModelFallbackEndEvent(WireModel):
    type: Literal["model_fallback_end"] = "model_fallback_end"


class AgentContinueErrorEvent(WireModel):
    """The run could not go on after a compaction (``post_compaction``): the compacted context is
    still over the model's input limit, so the request that should follow was not sent."""

    type: Literal["agent_continue_error"] = "agent_continue_error"
    source: Literal["post_compaction"]
    error_message: str


class ThinkingLevelChangedEvent(WireModel):
    type: Literal["thinking_level_changed"] = "thinking_level_changed"
    level: ThinkingLevel


class SessionInfoChangedEvent(WireModel):
    type: Literal["session_info_changed"] = "session_info_changed"
    name: str | None


class EntryAppendedEvent(WireModel):
    type: Literal["entry_appended"] = "entry_appended"
    entry: dict[str, Any]


class ApprovalRequest(WireModel):
    """The ``approval`` record of a ``select`` that asks whether a tool call may run (the built-in
    approvals plugin; docs/permissions.md). Answered ``Allow once`` / ``Allow for this session`` /
    ``Deny`` (with an optional ``message``: the denial text the model sees)."""

    tool_name: str
    tool_call_id: str
    args: dict[str, Any]
    diff: str | None = None
    """``edit``/``write`` only: the change as a unified diff, when it can be told."""
    scope: str | None = None
    """What "Allow for this session" allows, as a rule (``Bash(npm test:*)``)."""


class ExtensionUiRequest(WireModel):
    """A dialog (select/confirm/input/editor, answered by ``extension_ui_response``) or a
    fire-and-forget UI call (notify, setStatus, setWidget, setTitle, set_editor_text).

    A provider login adds the ``oauth_*`` methods, each carrying ``provider`` and ``loginId``:
    ``oauth_auth`` (``info: {url, instructions?}``), ``oauth_device_code`` (``info: {userCode,
    verificationUri, intervalSeconds?, expiresInSeconds?}``), ``oauth_progress`` (``message``),
    ``oauth_info`` (``message``, ``links: [{url, label?}]``) and ``oauth_manual_code_cancel`` need no
    answer; ``oauth_prompt`` (``prompt: {message, placeholder?}``), ``oauth_select`` (``prompt:
    {message, options: [{id, label}]}``) and ``oauth_manual_code`` (``prompt: {message}``) are
    answered with ``value`` (or ``cancelled``).

    A ``select`` that asks to approve a tool call carries ``approval`` (:class:`ApprovalRequest`)."""

    type: Literal["extension_ui_request"] = "extension_ui_request"
    id: str
    method: Literal[
        "select", "confirm", "input", "editor", "notify", "setStatus", "setWidget", "setTitle",
        "set_editor_text", "oauth_auth", "oauth_device_code", "oauth_progress", "oauth_info", "oauth_prompt",
        "oauth_select", "oauth_manual_code", "oauth_manual_code_cancel",
    ]  # fmt: skip
    provider: str | None = None
    login_id: str | None = None
    info: dict[str, Any] | None = None
    links: list[dict[str, Any]] | None = None
    prompt: dict[str, Any] | None = None
    title: str | None = None
    message: str | None = None
    options: list[Any] | None = None
    placeholder: str | None = None
    prefill: str | None = None
    timeout: int | None = None
    notify_type: Literal["info", "warning", "error"] | None = None
    status_key: str | None = None
    status_text: str | None = None
    widget_key: str | None = None
    widget_lines: list[str] | None = None
    widget_placement: Literal["aboveEditor", "belowEditor"] | None = None
    text: str | None = None
    approval: ApprovalRequest | None = None


class WorkflowRunUpdateEvent(WireModel):
    """Additive: a workflow run changed status or stage (the built-in workflows plugin)."""

    type: Literal["workflow_run_update"] = "workflow_run_update"
    run_id: str
    name: str
    status: str
    stage: str | None = None


_ALL: tuple[type[WireModel], ...] = (
    AgentStartEvent, AgentEndEvent, AgentSettledEvent, TurnStartEvent, TurnEndEvent,
    MessageStartEvent, MessageUpdateEvent, MessageEndEvent,
    ToolExecutionStartEvent, ToolExecutionUpdateEvent, ToolExecutionEndEvent, BashExecutionUpdateEvent,
    QueueUpdateEvent, CompactionStartEvent, CompactionEndEvent, AutoRetryStartEvent, AutoRetryEndEvent,
    SummarizationRetryScheduledEvent, SummarizationRetryAttemptStartEvent, SummarizationRetryFinishedEvent,
    ExtensionErrorEvent, ModelChangedEvent, ModelFallbackStartEvent, ModelFallbackEndEvent,
    AgentContinueErrorEvent, ThinkingLevelChangedEvent, SessionInfoChangedEvent, EntryAppendedEvent,
    ExtensionUiRequest, WorkflowRunUpdateEvent,
)  # fmt: skip

EVENTS: dict[str, type[WireModel]] = {cls.model_fields["type"].default: cls for cls in _ALL}
"""Event ``type`` → its model (``extension_ui_request`` included)."""

Event = Annotated[
    AgentStartEvent | AgentEndEvent | AgentSettledEvent | TurnStartEvent | TurnEndEvent
    | MessageStartEvent | MessageUpdateEvent | MessageEndEvent
    | ToolExecutionStartEvent | ToolExecutionUpdateEvent | ToolExecutionEndEvent | BashExecutionUpdateEvent
    | QueueUpdateEvent | CompactionStartEvent | CompactionEndEvent | AutoRetryStartEvent | AutoRetryEndEvent
    | SummarizationRetryScheduledEvent | SummarizationRetryAttemptStartEvent
    | SummarizationRetryFinishedEvent | ExtensionErrorEvent | ModelChangedEvent
    | ModelFallbackStartEvent | ModelFallbackEndEvent | AgentContinueErrorEvent
    | ThinkingLevelChangedEvent | SessionInfoChangedEvent | EntryAppendedEvent | ExtensionUiRequest
    | WorkflowRunUpdateEvent,
    Field(discriminator="type"),
]  # fmt: skip
"""Discriminated union of every event."""

OutputRecord = Response | Event
"""Anything the host prints on stdout."""

# --- validation of printed records -----------------------------------------------------------


class OutputError(ValueError):
    """An output record does not match the protocol."""


def validate_output_line(obj: Any) -> None:
    """Check one output record (a decoded dict, or the raw line) against the protocol.

    Responses are checked against ``RESPONSE_DATA`` too: ``data`` absent where the command has no
    payload, null only where allowed, else the command's data model. Raises ``OutputError``.
    """
    if isinstance(obj, str | bytes):
        try:
            obj = loads_strict(obj if isinstance(obj, str) else obj.decode())
        except ValueError as exc:  # NaN / Infinity too: the output is strict JSON
            raise OutputError(f"not JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise OutputError(f"output record is not an object: {obj!r:.200}")
    kind = obj.get("type")
    try:
        if kind == "response":
            success = obj.get("success")
            if success is True:
                SuccessResponse.model_validate(obj)
                _check_data(obj)
            elif success is False:
                ErrorResponse.model_validate(obj)
            else:
                raise OutputError(f"response: success must be true or false, got {success!r}")
            return
        cls = EVENTS.get(kind) if isinstance(kind, str) else None
        if cls is None:
            raise OutputError(f"unknown output record type: {kind!r}")
        if "id" in obj and kind not in ("bash_execution_update", "extension_ui_request"):
            raise OutputError(f"event {kind} must not carry an id")
        cls.model_validate(obj)
    except ValidationError as exc:
        raise OutputError(f"{kind}: {_short(exc)}") from None


def _check_data(obj: dict[str, Any]) -> None:
    command = obj["command"]
    spec = RESPONSE_DATA.get(command)
    if spec is None or spec.any_data:
        return
    if "data" not in obj:
        if spec.model is None or spec.optional:
            return
        raise OutputError(f"response {command}: data is required")
    data = obj["data"]
    if spec.model is None:
        raise OutputError(f"response {command}: data must be absent, got {data!r:.200}")
    if data is None:
        if spec.nullable:
            return
        raise OutputError(f"response {command}: data must not be null")
    try:
        spec.model.model_validate(data)
    except ValidationError as exc:
        raise OutputError(f"response {command}: data: {_short(exc)}") from None


def _short(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False)[:3]:
        loc = ".".join(str(p) for p in err["loc"])
        parts.append(f"{loc}: {err['msg']}" if loc else err["msg"])
    return "; ".join(parts)
