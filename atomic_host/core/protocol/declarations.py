"""Every RPC command, declared once: its ``type``, lane, fields and the shape of its success ``data``.

A declaration is a plain class with annotated fields (snake_case; camelCase on the wire)::

    @command("set_model", data="Model")
    class SetModel:
        \"\"\"Select a model.\"\"\"
        provider: str
        model_id: str
        persist: bool | None = None

Everything else is derived from :data:`DECLARATIONS`: the pydantic models and the ``Command``
union (``commands.py``), ``RESPONSE_DATA`` (``responses.py``), the JSON Schema, the RPC lanes and
the handler table (``frontends/rpc/table.py`` binds ``on_<type>`` handlers to these), the client's
command methods and the command index of docs/protocol.md (``generate.py`` writes both). Adding a
command is this declaration plus its handler; then ``python -m atomic_host.core.protocol.generate``.

This module imports no pydantic (annotations stay strings until ``commands.py`` builds the models),
so the server knows every lane before the first command is read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # names the field annotations use; resolved when commands.py builds the models
    from atomic_host.core.protocol._base import AnswerFlag, AnswerText, JsonScalar
    from atomic_host.core.protocol.messages import ImageContent

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
QueueMode = Literal["all", "one-at-a-time"]
StreamingBehavior = Literal["steer", "followUp"]
WorkflowStatusFilter = Literal[
    "pending", "running", "paused", "blocked", "completed", "failed", "skipped", "cancelled", "killed",
    "crashed", "awaiting_input", "all",
]  # fmt: skip

Lane = Literal["ordinary", "concurrent"]
ANY = "any"
"""``data=ANY``: the success ``data`` is not checked (login flows, UI responses)."""


class Declaration:
    """One command as declared: what the server, the validator, the schema and the docs read."""

    __slots__ = ("cls", "data", "lane", "nullable", "optional", "type")

    def __init__(self, cls: type, type_: str, lane: Lane, data: str | None, nullable: bool, optional: bool) -> None:
        self.cls = cls
        """The declaring class: its annotations are the fields, its docstring the description."""
        self.type = type_
        self.lane: Lane = lane
        self.data = data
        """Name of the response model in ``responses.py`` (or ``Model``), ``ANY``, or None: no ``data``."""
        self.nullable = nullable
        """``data`` may be ``null`` (e.g. nothing to cycle to)."""
        self.optional = optional
        """``data`` may be absent."""

    @property
    def fields(self) -> dict[str, str]:
        """Field name → annotation text, in declaration order (``id`` included when redeclared)."""
        return dict(getattr(self.cls, "__annotations__", {}))

    @property
    def bare(self) -> bool:
        """No fields besides ``type`` and ``id``: never validated, so no pydantic on its path."""
        return not self.fields

    @property
    def model_name(self) -> str:
        """The pydantic model ``commands.py`` builds for it: ``<Class>Command``."""
        return f"{self.cls.__name__}Command"

    @property
    def summary(self) -> str:
        """The docstring's first paragraph on one line, in markdown."""
        first = (self.cls.__doc__ or "").strip().split("\n\n", 1)[0]
        return " ".join(first.split()).replace("``", "`")


DECLARATIONS: dict[str, Declaration] = {}
"""Command ``type`` → its declaration, in declaration order."""


def command(
    type_: str,
    *,
    lane: Lane = "ordinary",
    data: str | None = None,
    nullable: bool = False,
    optional: bool = False,
) -> Callable[[type], type]:
    """Declare the decorated class as command ``type_`` (module docstring).

    ``lane``: ``ordinary`` (one at a time, in arrival order) or ``concurrent`` (answered at once:
    abort, bash, UI responses, …; semantics §1). ``data``: the response model's name, ``ANY``, or
    None for a response without ``data``.
    """
    if lane not in ("ordinary", "concurrent"):
        raise ValueError(f"unknown lane {lane!r} for {type_}")

    def declare(cls: type) -> type:
        if type_ in DECLARATIONS:
            raise ValueError(f"command {type_!r} is declared twice")
        DECLARATIONS[type_] = Declaration(cls, type_, lane, data, nullable, optional)
        return cls

    return declare


# --- prompting and queues --------------------------------------------------------------------


@command("prompt", data="PromptAck")
class Prompt:
    """Send a user message; while a run streams, ``streamingBehavior`` says whether it steers or follows up."""

    message: str
    images: list[ImageContent] | None = None
    streaming_behavior: StreamingBehavior | None = None


@command("steer", data="PromptAck")
class Steer:
    """Queue a message delivered after the current tool calls of the run."""

    message: str
    images: list[ImageContent] | None = None


@command("follow_up", data="PromptAck")
class FollowUp:
    """Queue a message delivered when the run would stop."""

    message: str
    images: list[ImageContent] | None = None


@command("abort", lane="concurrent")
class Abort:
    """Stop the current run (and its tools); answered at once."""


@command("clear_queue", lane="concurrent", data="QueueTexts")
class ClearQueue:
    """Remove every queued steering and follow-up message; the data lists what was removed."""


@command("pause_queued_messages", lane="concurrent")
class PauseQueuedMessages:
    """Hold queued messages back until ``resume_queued_messages``."""


@command("resume_queued_messages", lane="concurrent", data="QueueRelease")
class ResumeQueuedMessages:
    """Release held queued messages."""


@command("set_steering_mode")
class SetSteeringMode:
    """Deliver queued steering messages all at once or one at a time."""

    mode: QueueMode


@command("set_follow_up_mode")
class SetFollowUpMode:
    """Deliver queued follow-up messages all at once or one at a time."""

    mode: QueueMode


# --- sessions --------------------------------------------------------------------------------


@command("new_session", data="CancelledData")
class NewSession:
    """Start a new session (a plugin may cancel)."""

    parent_session: str | None = None


@command("delete_session")
class DeleteSession:
    """Delete a session of this project; ``sessionId`` wins, without it the request ``id`` names it."""

    session_id: str | None = None


@command("switch_session", data="CancelledData")
class SwitchSession:
    """Open another session; needs ``sessionId`` (or the older ``sessionPath``)."""

    session_id: str | None = None
    session_path: str | None = None
    session_directory: str | None = None
    cwd_override: str | None = None

    def check(self) -> str | None:
        """Why the command is invalid, or None (run after field validation)."""
        if self.session_id is None and self.session_path is None:
            return "Missing required field: sessionId"
        return None


@command("import_session", data="CancelledData")
class ImportSession:
    """Import a session file and open it."""

    input_path: str
    cwd_override: str | None = None


@command("list_sessions", data="SessionsData")
class ListSessions:
    """This project's sessions, newest first."""


@command("start_pending_recovery", data="RecoveryReport")
class StartPendingRecovery:
    """Resume what a crashed host left: queued messages, an unanswered prompt, workflow stages."""

    reason: Literal["startup", "resume", "workflow_stage_resume"] | None = None


@command("fork", data="ForkData")
class Fork:
    """A new session from the path up to ``entryId`` (a user message; its text comes back for editing)."""

    entry_id: str


@command("clone", data="CancelledData")
class Clone:
    """A new session with the whole current path."""


@command("get_fork_messages", data="ForkMessagesData")
class GetForkMessages:
    """The user messages ``fork`` can start from."""


@command("get_entries", data="EntriesData")
class GetEntries:
    """The session's entries (only those after ``since`` when given)."""

    since: str | None = None


@command("get_tree", data="TreeData")
class GetTree:
    """The session tree with the current leaf."""


class NavigateTreeOptions:
    """``navigate_tree``'s ``options`` (a nested object; ``commands.py`` builds its model too)."""

    summarize: bool | None = None
    custom_instructions: str | None = None
    replace_instructions: bool | None = None
    label: str | None = None


@command("navigate_tree", data="NavigateTreeData")
class NavigateTree:
    """Move the leaf to ``targetId``, optionally summarising the branch left."""

    target_id: str
    options: NavigateTreeOptions | None = None


@command("set_label")
class SetLabel:
    """Label an entry; omit ``label`` (or send an empty one) to clear it."""

    entry_id: str
    label: str | None = None


@command("set_session_name")
class SetSessionName:
    """Name the session."""

    name: str


@command("get_last_assistant_text", data="LastAssistantText")
class GetLastAssistantText:
    """The text of the last assistant reply."""


@command("get_session_stats", data="SessionStatsData")
class GetSessionStats:
    """Message counts, tokens, cost and context usage."""


@command("get_session_summary", data="SessionSummaryData")
class GetSessionSummary:
    """The stored session summary."""


@command("export_html", data="ExportHtmlData")
class ExportHtml:
    """Write the session as an HTML page."""

    output_path: str | None = None


# --- state -----------------------------------------------------------------------------------


@command("get_state", data="StateData")
class GetState:
    """Model, thinking level, streaming and compaction state, queue modes, the session."""


@command("get_messages", data="MessagesData")
class GetMessages:
    """The model's context as messages."""


# --- models and auth -------------------------------------------------------------------------


@command("set_model", data="Model")
class SetModel:
    """Select a model (``persist`` makes it the default)."""

    provider: str
    model_id: str
    persist: bool | None = None


@command("cycle_model", data="CycleModelData", nullable=True)
class CycleModel:
    """Select the next (or previous) scoped model; ``null`` when there is none."""

    direction: Literal["forward", "backward"] | None = None
    persist: bool | None = None


@command("get_available_models", data="AvailableModelsData")
class GetAvailableModels:
    """The models that can run, the scoped ones and each provider's sign-in state."""


@command("refresh_models", lane="concurrent", data="RefreshModelsData")
class RefreshModels:
    """Reload models.json and auth.json and fetch dynamic catalogs; answer as ``get_available_models``
    plus ``aborted`` and ``errors``."""

    timeout_ms: int | None = None
    force: bool | None = None
    allow_network: bool | None = None


@command("login_provider", lane="concurrent", data=ANY)
class LoginProvider:
    """Sign in to a provider: an API key (given, or asked for), or OAuth over ``oauth_*`` UI requests.

    ``loginId`` (default: the provider id) is echoed on every UI request of the login and names it to
    ``cancel_login_provider``. Concurrent: a login waits for a person in a browser.
    """

    provider: str
    api_key: str | None = None
    auth_type: Literal["api_key", "oauth"] | None = None
    login_id: str | None = None


@command("save_provider_credential", data="AvailableModelsData")
class SaveProviderCredential:
    """Store a credential record as given (``{"type":"api_key","key",...}`` or ``{"type":"oauth",...}``)."""

    provider: str
    credential: dict[str, Any]


@command("cancel_login_provider", lane="concurrent")
class CancelLoginProvider:
    """Cancel the login ``loginId`` of ``provider`` (every login of ``provider`` without ``loginId``)."""

    provider: str | None = None
    login_id: str | None = None


@command("logout_provider", data="LogoutProviderData")
class LogoutProvider:
    """Remove a provider's stored credential."""

    provider: str


# --- thinking --------------------------------------------------------------------------------


@command("set_thinking_level", data="ThinkingAck", optional=True)
class SetThinkingLevel:
    """Set the thinking level (clamped to what the model supports)."""

    level: ThinkingLevel
    persist: bool | None = None


@command("cycle_thinking_level", data="ThinkingLevelData", nullable=True)
class CycleThinkingLevel:
    """Select the next thinking level; ``null`` when the model has none."""


@command("get_available_thinking_levels", data="ThinkingLevelsData")
class GetAvailableThinkingLevels:
    """The thinking levels the current model supports."""


# --- compaction and retry --------------------------------------------------------------------


@command("compact", data="CompactionResult")
class Compact:
    """Compact the context now."""

    custom_instructions: str | None = None


@command("abort_compaction", lane="concurrent")
class AbortCompaction:
    """Stop a running compaction."""


@command("set_auto_compaction")
class SetAutoCompaction:
    """Turn automatic compaction on or off."""

    enabled: bool


@command("set_auto_retry")
class SetAutoRetry:
    """Turn automatic retry of failed runs on or off."""

    enabled: bool


@command("abort_retry", lane="concurrent")
class AbortRetry:
    """Stop a retry countdown."""


# --- bash ------------------------------------------------------------------------------------


@command("bash", lane="concurrent", data="BashResultData")
class Bash:
    """Run a shell command; its output streams as ``bash_execution_update`` events."""

    command: str
    exclude_from_context: bool | None = None


@command("user_bash", lane="concurrent", data="BashResultData")
class UserBash:
    """As ``bash``, through the ``user_bash`` hooks."""

    command: str
    exclude_from_context: bool | None = None


@command("abort_bash", lane="concurrent")
class AbortBash:
    """Cancel a bash request; without ``requestId`` every RPC-owned bash request."""

    request_id: JsonScalar = None


# --- tools, commands, workflows, extension UI ------------------------------------------------


@command("get_tools", data="ToolsReport")
class GetTools:
    """Every tool, active or not, with where it came from."""


@command("get_commands", data="CommandsData")
class GetCommands:
    """The slash commands: extensions', prompt templates', skills'."""


@command("get_command_completions", data="CompletionsData")
class GetCommandCompletions:
    """Argument completions of a slash command."""

    command_name: str
    argument_prefix: str


@command("reload")
class Reload:
    """Discover extensions, prompt templates, skills, settings and models.json again (``session_shutdown``
    and ``session_start`` with reason ``reload``)."""


@command("get_shortcuts", data="ShortcutsData")
class GetShortcuts:
    """The keyboard shortcuts extensions registered (``api.register_shortcut``)."""


@command("invoke_shortcut")
class InvokeShortcut:
    """Run an extension's shortcut handler; ``Shortcut not found: <key>`` for an unknown key."""

    key: str


@command("list_workflow_runs", data="WorkflowRunsData")
class ListWorkflowRuns:
    """Workflow runs, filtered by status."""

    status: WorkflowStatusFilter | None = None


@command("get_workflow_run_summary", data="WorkflowRunDetail")
class GetWorkflowRunSummary:
    """One workflow run with its stages."""

    run_id: str


@command("extension_ui_response", lane="concurrent", data=ANY)
class ExtensionUiResponse:
    """Answer to an ``extension_ui_request``; ``id`` is that request's id. Never answered."""

    id: str
    value: AnswerText = None
    confirmed: AnswerFlag = None
    cancelled: AnswerFlag = None
