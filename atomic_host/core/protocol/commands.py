"""Every command a client may send (rpc-protocol.md "Commands" plus semantics.md extras).

Each command is a model with ``type: Literal[...]`` and an optional ``id`` (any JSON scalar,
echoed in the response). Unknown extra keys are allowed and kept. ``COMMANDS`` maps each
``type`` to its model; ``Command`` is the discriminated union used for the JSON Schema.
"""

from typing import Annotated, Any, Literal, Self

from pydantic import Field, PlainValidator, model_validator

from atomic_host.core.protocol._base import JsonScalar, WireModel
from atomic_host.core.protocol.messages import ImageContent

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
QueueMode = Literal["all", "one-at-a-time"]
StreamingBehavior = Literal["steer", "followUp"]
WorkflowStatusFilter = Literal[
    "pending", "running", "paused", "blocked", "completed", "failed", "skipped", "cancelled", "killed",
    "crashed", "awaiting_input", "all",
]  # fmt: skip


class CommandBase(WireModel):
    """Fields every command carries."""

    id: JsonScalar = None


# --- prompting -------------------------------------------------------------------------------


class PromptCommand(CommandBase):
    type: Literal["prompt"] = "prompt"
    message: str
    images: list[ImageContent] | None = None
    streaming_behavior: StreamingBehavior | None = None


class SteerCommand(CommandBase):
    type: Literal["steer"] = "steer"
    message: str
    images: list[ImageContent] | None = None


class FollowUpCommand(CommandBase):
    type: Literal["follow_up"] = "follow_up"
    message: str
    images: list[ImageContent] | None = None


class AbortCommand(CommandBase):
    type: Literal["abort"] = "abort"


class ClearQueueCommand(CommandBase):
    type: Literal["clear_queue"] = "clear_queue"


class PauseQueuedMessagesCommand(CommandBase):
    type: Literal["pause_queued_messages"] = "pause_queued_messages"


class ResumeQueuedMessagesCommand(CommandBase):
    type: Literal["resume_queued_messages"] = "resume_queued_messages"


# --- sessions --------------------------------------------------------------------------------


class NewSessionCommand(CommandBase):
    type: Literal["new_session"] = "new_session"
    parent_session: str | None = None


class DeleteSessionCommand(CommandBase):
    """``sessionId`` wins; without it the request ``id`` names the session."""

    type: Literal["delete_session"] = "delete_session"
    session_id: str | None = None


class SwitchSessionCommand(CommandBase):
    """Needs ``sessionId`` (or the older ``sessionPath``)."""

    type: Literal["switch_session"] = "switch_session"
    session_id: str | None = None
    session_path: str | None = None
    session_directory: str | None = None
    cwd_override: str | None = None

    @model_validator(mode="after")
    def _needs_target(self) -> Self:
        if self.session_id is None and self.session_path is None:
            raise ValueError("Missing required field: sessionId")
        return self


class ImportSessionCommand(CommandBase):
    type: Literal["import_session"] = "import_session"
    input_path: str
    cwd_override: str | None = None


class StartPendingRecoveryCommand(CommandBase):
    type: Literal["start_pending_recovery"] = "start_pending_recovery"
    reason: Literal["startup", "resume", "workflow_stage_resume"] | None = None


class ForkCommand(CommandBase):
    type: Literal["fork"] = "fork"
    entry_id: str


class CloneCommand(CommandBase):
    type: Literal["clone"] = "clone"


class GetForkMessagesCommand(CommandBase):
    type: Literal["get_fork_messages"] = "get_fork_messages"


class GetEntriesCommand(CommandBase):
    type: Literal["get_entries"] = "get_entries"
    since: str | None = None


class GetTreeCommand(CommandBase):
    type: Literal["get_tree"] = "get_tree"


class NavigateTreeOptions(WireModel):
    summarize: bool | None = None
    custom_instructions: str | None = None
    replace_instructions: bool | None = None
    label: str | None = None


class NavigateTreeCommand(CommandBase):
    type: Literal["navigate_tree"] = "navigate_tree"
    target_id: str
    options: NavigateTreeOptions | None = None


class SetLabelCommand(CommandBase):
    """Omit ``label`` (or send an empty one) to clear it."""

    type: Literal["set_label"] = "set_label"
    entry_id: str
    label: str | None = None


class SetSessionNameCommand(CommandBase):
    type: Literal["set_session_name"] = "set_session_name"
    name: str


class GetLastAssistantTextCommand(CommandBase):
    type: Literal["get_last_assistant_text"] = "get_last_assistant_text"


class GetSessionStatsCommand(CommandBase):
    type: Literal["get_session_stats"] = "get_session_stats"


class ExportHtmlCommand(CommandBase):
    type: Literal["export_html"] = "export_html"
    output_path: str | None = None


class GetSessionSummaryCommand(CommandBase):
    type: Literal["get_session_summary"] = "get_session_summary"


class ListSessionsCommand(CommandBase):
    type: Literal["list_sessions"] = "list_sessions"


# --- state -----------------------------------------------------------------------------------


class GetStateCommand(CommandBase):
    type: Literal["get_state"] = "get_state"


class GetMessagesCommand(CommandBase):
    type: Literal["get_messages"] = "get_messages"


# --- models and auth -------------------------------------------------------------------------


class SetModelCommand(CommandBase):
    type: Literal["set_model"] = "set_model"
    provider: str
    model_id: str
    persist: bool | None = None


class CycleModelCommand(CommandBase):
    type: Literal["cycle_model"] = "cycle_model"
    direction: Literal["forward", "backward"] | None = None
    persist: bool | None = None


class GetAvailableModelsCommand(CommandBase):
    type: Literal["get_available_models"] = "get_available_models"


class RefreshModelsCommand(CommandBase):
    type: Literal["refresh_models"] = "refresh_models"


class LoginProviderCommand(CommandBase):
    """``authType:"oauth"`` runs the provider's sign-in over ``oauth_*`` UI requests; otherwise an API
    key (``apiKey``, or asked for with an ``input`` request) is stored. ``loginId`` (default: the
    provider id) is echoed on every UI request of the login and names it to ``cancel_login_provider``."""

    type: Literal["login_provider"] = "login_provider"
    provider: str
    api_key: str | None = None
    auth_type: Literal["api_key", "oauth"] | None = None
    login_id: str | None = None


class SaveProviderCredentialCommand(CommandBase):
    """Store a credential record as given (``{"type":"api_key","key",...}`` or ``{"type":"oauth",...}``)."""

    type: Literal["save_provider_credential"] = "save_provider_credential"
    provider: str
    credential: dict[str, Any]


class CancelLoginProviderCommand(CommandBase):
    """Cancel the login ``loginId`` of ``provider`` (every login of ``provider`` without ``loginId``)."""

    type: Literal["cancel_login_provider"] = "cancel_login_provider"
    provider: str | None = None
    login_id: str | None = None


class LogoutProviderCommand(CommandBase):
    type: Literal["logout_provider"] = "logout_provider"
    provider: str


# --- thinking --------------------------------------------------------------------------------


class SetThinkingLevelCommand(CommandBase):
    type: Literal["set_thinking_level"] = "set_thinking_level"
    level: ThinkingLevel
    persist: bool | None = None


class CycleThinkingLevelCommand(CommandBase):
    type: Literal["cycle_thinking_level"] = "cycle_thinking_level"


class GetAvailableThinkingLevelsCommand(CommandBase):
    type: Literal["get_available_thinking_levels"] = "get_available_thinking_levels"


# --- queue modes -----------------------------------------------------------------------------


class SetSteeringModeCommand(CommandBase):
    type: Literal["set_steering_mode"] = "set_steering_mode"
    mode: QueueMode


class SetFollowUpModeCommand(CommandBase):
    type: Literal["set_follow_up_mode"] = "set_follow_up_mode"
    mode: QueueMode


# --- compaction and retry --------------------------------------------------------------------


class CompactCommand(CommandBase):
    type: Literal["compact"] = "compact"
    custom_instructions: str | None = None


class AbortCompactionCommand(CommandBase):
    type: Literal["abort_compaction"] = "abort_compaction"


class SetAutoCompactionCommand(CommandBase):
    type: Literal["set_auto_compaction"] = "set_auto_compaction"
    enabled: bool


class SetAutoRetryCommand(CommandBase):
    type: Literal["set_auto_retry"] = "set_auto_retry"
    enabled: bool


class AbortRetryCommand(CommandBase):
    type: Literal["abort_retry"] = "abort_retry"


# --- bash ------------------------------------------------------------------------------------


class BashCommand(CommandBase):
    type: Literal["bash"] = "bash"
    command: str
    exclude_from_context: bool | None = None


class UserBashCommand(CommandBase):
    type: Literal["user_bash"] = "user_bash"
    command: str
    exclude_from_context: bool | None = None


class AbortBashCommand(CommandBase):
    """Without ``requestId`` every RPC-owned bash request is cancelled."""

    type: Literal["abort_bash"] = "abort_bash"
    request_id: JsonScalar = None


# --- tools, commands, workflows, extension UI ------------------------------------------------


class GetToolsCommand(CommandBase):
    type: Literal["get_tools"] = "get_tools"


class GetCommandsCommand(CommandBase):
    type: Literal["get_commands"] = "get_commands"


class GetCommandCompletionsCommand(CommandBase):
    type: Literal["get_command_completions"] = "get_command_completions"
    command_name: str
    argument_prefix: str


class ListWorkflowRunsCommand(CommandBase):
    type: Literal["list_workflow_runs"] = "list_workflow_runs"
    status: WorkflowStatusFilter | None = None


class GetWorkflowRunSummaryCommand(CommandBase):
    type: Literal["get_workflow_run_summary"] = "get_workflow_run_summary"
    run_id: str


def _answer_as_sent(value: Any) -> Any:
    return value


# A dialog answer's fields: the schema says what is expected; any JSON value is taken, and the
# dialog treats one of another kind as cancelled (frontends/rpc/ui.py), so a wrong answer ends the
# dialog instead of leaving it open behind an error response no client expects.
_AnswerText = Annotated[Any, PlainValidator(_answer_as_sent, json_schema_input_type=str | None)]
_AnswerFlag = Annotated[Any, PlainValidator(_answer_as_sent, json_schema_input_type=bool | None)]


class ExtensionUiResponseCommand(CommandBase):
    """Answer to an ``extension_ui_request``; ``id`` is that request's id. Never answered."""

    type: Literal["extension_ui_response"] = "extension_ui_response"
    id: str
    value: _AnswerText = None
    confirmed: _AnswerFlag = None
    cancelled: _AnswerFlag = None


_ALL: tuple[type[CommandBase], ...] = (
    PromptCommand, SteerCommand, FollowUpCommand, AbortCommand, ClearQueueCommand,
    PauseQueuedMessagesCommand, ResumeQueuedMessagesCommand,
    NewSessionCommand, DeleteSessionCommand, SwitchSessionCommand, ImportSessionCommand,
    StartPendingRecoveryCommand, ForkCommand, CloneCommand, GetForkMessagesCommand, GetEntriesCommand,
    GetTreeCommand, NavigateTreeCommand, SetLabelCommand, SetSessionNameCommand,
    GetLastAssistantTextCommand, GetSessionStatsCommand, ExportHtmlCommand, GetSessionSummaryCommand,
    ListSessionsCommand, GetStateCommand, GetMessagesCommand,
    SetModelCommand, CycleModelCommand, GetAvailableModelsCommand, RefreshModelsCommand,
    LoginProviderCommand, SaveProviderCredentialCommand, CancelLoginProviderCommand, LogoutProviderCommand,
    SetThinkingLevelCommand, CycleThinkingLevelCommand, GetAvailableThinkingLevelsCommand,
    SetSteeringModeCommand, SetFollowUpModeCommand,
    CompactCommand, AbortCompactionCommand, SetAutoCompactionCommand, SetAutoRetryCommand, AbortRetryCommand,
    BashCommand, UserBashCommand, AbortBashCommand,
    GetToolsCommand, GetCommandsCommand, GetCommandCompletionsCommand,
    ListWorkflowRunsCommand, GetWorkflowRunSummaryCommand, ExtensionUiResponseCommand,
)  # fmt: skip

COMMANDS: dict[str, type[CommandBase]] = {cls.model_fields["type"].default: cls for cls in _ALL}
"""Command ``type`` → its model."""

Command = Annotated[
    PromptCommand | SteerCommand | FollowUpCommand | AbortCommand | ClearQueueCommand
    | PauseQueuedMessagesCommand | ResumeQueuedMessagesCommand
    | NewSessionCommand | DeleteSessionCommand | SwitchSessionCommand | ImportSessionCommand
    | StartPendingRecoveryCommand | ForkCommand | CloneCommand | GetForkMessagesCommand | GetEntriesCommand
    | GetTreeCommand | NavigateTreeCommand | SetLabelCommand | SetSessionNameCommand
    | GetLastAssistantTextCommand | GetSessionStatsCommand | ExportHtmlCommand | GetSessionSummaryCommand
    | ListSessionsCommand | GetStateCommand | GetMessagesCommand
    | SetModelCommand | CycleModelCommand | GetAvailableModelsCommand | RefreshModelsCommand
    | LoginProviderCommand | SaveProviderCredentialCommand | CancelLoginProviderCommand | LogoutProviderCommand
    | SetThinkingLevelCommand | CycleThinkingLevelCommand | GetAvailableThinkingLevelsCommand
    | SetSteeringModeCommand | SetFollowUpModeCommand
    | CompactCommand | AbortCompactionCommand | SetAutoCompactionCommand | SetAutoRetryCommand
    | AbortRetryCommand | BashCommand | UserBashCommand | AbortBashCommand
    | GetToolsCommand | GetCommandsCommand | GetCommandCompletionsCommand
    | ListWorkflowRunsCommand | GetWorkflowRunSummaryCommand | ExtensionUiResponseCommand,
    Field(discriminator="type"),
]  # fmt: skip
"""Discriminated union of every command (used for the JSON Schema)."""
