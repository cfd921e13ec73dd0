"""Responses and the typed ``data`` of each command's success response.

``RESPONSE_DATA`` says, per command, what ``data`` must be: absent, a model (maybe nullable or
optional), or anything; it is derived from the commands' declarations (``declarations.py``), which
name these models. ``validate_output_line`` in ``events`` uses it.
"""

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field

from atomic_host.core.protocol._base import JsonScalar, WireModel
from atomic_host.core.protocol.declarations import ANY, DECLARATIONS, Declaration, ThinkingLevel
from atomic_host.core.protocol.messages import AgentMessage, Usage
from atomic_host.core.protocol.model import Model

# --- envelopes -------------------------------------------------------------------------------


class SuccessResponse(WireModel):
    """``{"id"?, "type": "response", "command", "success": true, "data"?}``."""

    id: JsonScalar = None
    type: Literal["response"] = "response"
    command: str
    success: Literal[True] = True
    data: Any = None


class ErrorResponse(WireModel):
    """``{"id"?, "type": "response", "command", "success": false, "error"}``."""

    id: JsonScalar = None
    type: Literal["response"] = "response"
    command: str
    success: Literal[False] = False
    error: str
    error_code: str | None = None
    error_details: dict[str, Any] | None = None


Response = Annotated[SuccessResponse | ErrorResponse, Field(discriminator="success")]
"""One response record; exactly one per command."""

# --- prompting and queues --------------------------------------------------------------------


class PromptAck(WireModel):
    """``prompt`` / ``steer`` / ``follow_up`` data."""

    disposition: Literal["started", "queued", "handled"]


class QueueTexts(WireModel):
    """``clear_queue`` data and the ``queue_update`` payload."""

    steering: list[str]
    follow_up: list[str]


class QueueRelease(WireModel):
    """``resume_queued_messages`` data."""

    released: bool


class CancelledData(WireModel):
    """``new_session`` / ``switch_session`` / ``clone`` / ``import_session`` data."""

    cancelled: bool


# --- state and messages ----------------------------------------------------------------------


class SourceInfo(WireModel):
    """Where a command or tool came from (``frontends/rpc/sources.py``)."""

    path: str
    source: str
    """builtin | local | package:<plugin>"""
    scope: Literal["user", "project", "temporary"]
    origin: Literal["package", "top-level"]
    base_dir: str | None = None


class ResourceOverlap(WireModel):
    """One name two contributions claimed: ``bundled`` holds it, ``inherited`` was skipped (a tool)
    or renamed ``name:N`` (a command)."""

    resource_type: Literal["tool", "command", "prompt"]
    name: str
    bundled: SourceInfo
    inherited: SourceInfo


class StateData(WireModel):
    """``get_state`` data."""

    model: Model | None
    thinking_level: ThinkingLevel
    is_streaming: bool
    is_compacting: bool
    steering_mode: Literal["all", "one-at-a-time"]
    follow_up_mode: Literal["all", "one-at-a-time"]
    session_location: str | None = None
    session_id: str
    session_name: str | None = None
    auto_compaction_enabled: bool
    message_count: int
    pending_message_count: int
    queued_messages_paused: bool | None = None
    compaction_reason: Literal["manual", "threshold", "overflow"] | None = None
    """The running compaction's reason (absent when none runs)."""
    resource_overlaps: list[ResourceOverlap] | None = None
    model_fallback_message: str | None = None
    model_fallback_reason: str | None = None


class MessagesData(WireModel):
    """``get_messages`` data."""

    messages: list[AgentMessage]


# --- models, auth, thinking ------------------------------------------------------------------


class CycleModelData(WireModel):
    """``cycle_model`` data (``null`` with fewer than two models)."""

    model: Model
    thinking_level: ThinkingLevel
    is_scoped: bool


class ScopedModel(WireModel):
    model: Model
    thinking_level: ThinkingLevel | None = None


class AuthStatus(WireModel):
    configured: bool
    source: str | None = None
    label: str | None = None


class ProviderRef(WireModel):
    id: str
    name: str


class ProviderAuthStatus(WireModel):
    provider: str
    status: AuthStatus


class AvailableModelsData(WireModel):
    """``get_available_models`` / ``refresh_models`` data."""

    models: list[Model]
    scoped_models: list[ScopedModel] | None = None
    oauth_providers: list[Any] | None = None
    custom_auth_providers: list[ProviderRef] | None = None
    provider_auth_statuses: list[ProviderAuthStatus] | None = None


class CatalogError(WireModel):
    """A provider whose catalog could not be fetched (or the file that could not be read)."""

    provider: str
    message: str


class RefreshModelsData(AvailableModelsData):
    """``refresh_models`` data: ``aborted`` when ``timeoutMs`` passed before every dynamic catalog
    answered; ``errors`` for the providers (or files) that failed."""

    aborted: bool
    errors: list[CatalogError]


class LogoutProviderData(WireModel):
    """``logout_provider`` data."""

    provider: str
    auth_status: AuthStatus
    models: list[Model]
    scoped_models: list[ScopedModel] | None = None


class ThinkingAck(WireModel):
    """``set_thinking_level`` data (may be omitted entirely)."""

    level: ThinkingLevel
    provider: str | None = None
    model_id: str | None = None


class ThinkingLevelData(WireModel):
    """``cycle_thinking_level`` data (``null`` for a non-reasoning model)."""

    level: ThinkingLevel


class ThinkingLevelsData(WireModel):
    """``get_available_thinking_levels`` data, in cycle order."""

    levels: list[ThinkingLevel]


# --- compaction ------------------------------------------------------------------------------


class CompactionParameters(WireModel):
    """Snake_case on the wire, as Atomic sends them."""

    compression_ratio: float = Field(alias="compression_ratio")
    preserve_recent: int = Field(alias="preserve_recent")
    query: str | None = None


class CompactionStats(WireModel):
    lines_before: int
    lines_deleted: int
    lines_kept: int
    range_count: int
    tokens_before: int
    tokens_after: int
    percent_reduction: float


class PlannerModel(WireModel):
    provider: str
    id: str
    thinking_level: ThinkingLevel | None = None


class CompactionResult(WireModel):
    """``compact`` data and ``compaction_end.result``."""

    compacted_text: str
    first_kept_entry_id: str | None
    tokens_before: int
    prompt_version: int
    parameters: CompactionParameters
    rung: str
    stats: CompactionStats
    planner_model: PlannerModel | None = None
    backup_path: str | None = None


# --- bash, stats, tools ----------------------------------------------------------------------


class BashResultData(WireModel):
    """``bash`` / ``user_bash`` data; no ``exitCode`` when cancelled."""

    output: str
    exit_code: int | None = None
    cancelled: bool
    truncated: bool
    full_output_path: str | None = None


class TokenTotals(WireModel):
    input: int
    output: int
    cache_read: int
    cache_write: int
    total: int


class ContextUsage(WireModel):
    """``tokens``/``percent`` are null right after compaction."""

    tokens: int | None
    context_window: int
    percent: float | None


class SessionStatsData(WireModel):
    """``get_session_stats`` data."""

    session_file: str | None = None
    session_id: str
    user_messages: int
    assistant_messages: int
    tool_calls: int
    tool_results: int
    total_messages: int
    tokens: TokenTotals
    cost: float
    context_usage: ContextUsage | None = None
    latest_assistant_usage: Usage | None = None


class ToolSelection(WireModel):
    source: Literal[
        "default-tools-setting", "built-in-defaults", "tools-allowlist", "explicit-selection",
        "no-built-in-tools", "no-tools",
    ]  # fmt: skip
    description: str
    names: list[str]
    modifiers: list[str]


class ToolInfo(WireModel):
    name: str
    active: bool
    exposure: str
    source: str
    source_path: str
    summary: str
    inactive_reason: str | None = None


class MissingTool(WireModel):
    name: str
    reason: str


class ExcludedTool(WireModel):
    name: str
    reason: str | None = None


class ToolsReport(WireModel):
    """``get_tools`` data."""

    selection: ToolSelection
    tools: list[ToolInfo]
    missing: list[MissingTool]
    excluded: list[ExcludedTool]


# --- sessions, entries, tree -----------------------------------------------------------------


class ExportHtmlData(WireModel):
    path: str


class RecoveryReport(WireModel):
    """``start_pending_recovery`` data."""

    replayed: int
    dropped: int
    completions: int
    notices: list[str]


class ForkData(WireModel):
    """``fork`` data: the text of the forked-from user message."""

    text: str
    cancelled: bool


class ForkMessage(WireModel):
    entry_id: str
    text: str


class ForkMessagesData(WireModel):
    messages: list[ForkMessage]


class SessionEntry(WireModel):
    """One session-file entry; its other keys depend on ``type`` and are kept as they are."""

    type: str
    id: str
    parent_id: str | None
    timestamp: str | None = None


class SessionSummaryEntry(SessionEntry):
    type: Literal["session_summary"] = "session_summary"
    summary: str
    summarized_through_id: str


class EntriesData(WireModel):
    """``get_entries`` data; ``leafId`` null for an empty session."""

    entries: list[SessionEntry]
    leaf_id: str | None


class TreeNode(WireModel):
    entry: SessionEntry
    children: list["TreeNode"]
    label: str | None = None
    label_timestamp: str | None = None


class TreeData(WireModel):
    """``get_tree`` data."""

    tree: list[TreeNode]
    leaf_id: str | None


class NavigateTreeData(WireModel):
    cancelled: bool
    editor_text: str | None = None


class LastAssistantText(WireModel):
    text: str | None


class SessionSummaryData(WireModel):
    summary: SessionSummaryEntry | None


class RpcSessionInfo(WireModel):
    """One ``list_sessions`` record; ``created``/``modified`` are ISO strings."""

    path: str | None = None
    id: str
    cwd: str
    name: str | None = None
    has_name: bool | None = None
    parent_session_path: str | None = None
    created: str
    modified: str
    message_count: int
    first_message: str
    summary: str | None = None
    summarized_through_id: str | None = None


class SessionsData(WireModel):
    sessions: list[RpcSessionInfo]


# --- commands and workflows ------------------------------------------------------------------


class CommandInfo(WireModel):
    """One ``get_commands`` entry (invoke with ``/name``)."""

    name: str
    description: str | None = None
    source: Literal["extension", "prompt", "skill"]
    location: Literal["user", "project", "path"] | None = None
    path: str | None = None
    has_argument_completions: bool | None = None
    """``get_command_completions`` can complete its arguments (this host always sends it)."""
    source_info: SourceInfo | None = None
    """Where it came from (this host always sends it)."""


class CommandsData(WireModel):
    commands: list[CommandInfo]


class ShortcutInfo(WireModel):
    key: str
    description: str | None = None


class ShortcutsData(WireModel):
    shortcuts: list[ShortcutInfo]


class CommandCompletion(WireModel):
    value: str
    label: str
    description: str | None = None


class CompletionsData(WireModel):
    completions: list[CommandCompletion] | None


class WorkflowRunSummary(WireModel):
    """One workflow run; ``summarizedThrough`` in Unix ms."""

    run_id: str
    name: str
    status: str
    label: str | None = None
    identity: Any = None
    summary: str | None = None
    summarized_through: int | None = None


class WorkflowStage(WireModel):
    id: str
    name: str
    status: str
    session_file: str | None = None


class WorkflowRunDetail(WorkflowRunSummary):
    """``get_workflow_run_summary`` data (detail shape is additive)."""

    stages: list[WorkflowStage] | None = None


class WorkflowRunsData(WireModel):
    runs: list[WorkflowRunSummary]


# --- per-command data contract ---------------------------------------------------------------


@dataclass(frozen=True)
class DataSpec:
    """What a success response's ``data`` must be for one command."""

    model: type[WireModel] | None = None
    """None with ``any_data`` False: ``data`` must be absent."""
    nullable: bool = False
    optional: bool = False
    any_data: bool = False


def _data_spec(decl: Declaration) -> DataSpec:
    if decl.data is None:
        return DataSpec()
    if decl.data == ANY:
        return DataSpec(any_data=True)
    return DataSpec(globals()[decl.data], nullable=decl.nullable, optional=decl.optional)


RESPONSE_DATA: dict[str, DataSpec] = {name: _data_spec(decl) for name, decl in DECLARATIONS.items()}
"""Command ``type`` → the contract for its success ``data`` (from its declaration)."""
