"""Every hook a plugin can implement: the extension API of atomic-host.

Hooks are grouped by phase. Each takes keyword arguments; pluggy lets an implementation accept
any subset of them, so new arguments never break old plugins. Event hooks take one event object
(``event``, a dataclass of :mod:`atomic_host.contract.events`) plus the host API (``api``): fields
are added to the event, never to the signature. Results are the small types of
:mod:`atomic_host.contract.results`; ``None`` always means "no opinion".

Each spec declares its combining rule with ``@spec(rule, returns=...)``; the rules are collected in
:data:`DISPATCH_RULES` and applied in one place, :mod:`atomic_host.plugins.dispatch`:

``each``          every implementation runs; the results are collected in call order.
``first_cancel``  stops at the first :class:`Cancel`.
``chain``         each result is applied to the event in call order; a result that ends the chain
                  (``InputResult.handled()``) stops it.
``first_block``   stops at the first ``ToolCallDecision(block=True)``.
``patch``         each result patches ``event.result``, in call order.
``first_result``  the first accepted non-None result wins.

Every implementation is called on its own by the host: an exception becomes an
``extension_error`` event naming the plugin, the hook and the error, and the other
implementations still run. A result of a type the spec does not accept is reported the same way
and ignored. An implementation may be ``async def`` unless the spec is ``sync``; the host awaits it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from atomic_host.contract.markers import hookspec
from atomic_host.contract.records import record
from atomic_host.contract.results import (
    AgentStartResult,
    BashResult,
    Cancel,
    Compaction,
    CompactResult,
    ContextResult,
    Failure,
    InputResult,
    MessageEndResult,
    ProviderPayload,
    RecoverResult,
    Summary,
    ToolCallDecision,
    ToolPatch,
)
from atomic_host.contract.tools import ToolResult

if TYPE_CHECKING:
    from atomic_host.contract.commands import SlashCommand
    from atomic_host.contract.events import (
        AfterProviderResponseEvent,
        BeforeAgentStartEvent,
        BeforeProviderHeadersEvent,
        BeforeProviderRequestEvent,
        CompactEvent,
        ContextEvent,
        InputEvent,
        MessageEndEvent,
        ModelSelectEvent,
        SessionBeforeCompactEvent,
        SessionBeforeForkEvent,
        SessionBeforeSwitchEvent,
        SessionBeforeTreeEvent,
        SessionCompactEvent,
        SessionInfoChangedEvent,
        SessionRecoverEvent,
        SessionShutdownEvent,
        SessionStartEvent,
        SessionTreeEvent,
        SummarizeEvent,
        SystemPromptEvent,
        ThinkingLevelSelectEvent,
        ToolCallEvent,
        ToolResultEvent,
        UserBashEvent,
        WireEvent,
    )
    from atomic_host.contract.host import HostAPI
    from atomic_host.contract.providers import ApiImpl, ProviderInfo
    from atomic_host.contract.registrations import Exporter, SessionStoreFactory, WorkflowDefinition
    from atomic_host.contract.tools import Tool

Combine = Literal["each", "first_cancel", "chain", "first_block", "patch", "first_result"]


@record
class HookRule:
    """How the results of one hook's implementations combine."""

    combine: Combine
    returns: tuple[type, ...] = ()
    """Result types accepted besides None; empty = results are not used (observers, registrations)."""
    sync: bool = False
    """Called from synchronous host code: ``async def`` implementations are refused."""
    bounded: bool = True
    """Async implementations are cancelled after ``hookTimeoutMs``. False for the strategy hooks
    that wait on a model (``compact``, ``summarize``): ``abort_compaction`` or the host cancels those."""
    on_failure: Callable[[str, str], Any] | None = None
    """For a gate that can fail closed (``tool_call``): the result an implementation that failed
    stands for, given its extensionPath and what went wrong, when it fails closed (``@fail_closed``
    or the ``hooks.failClosed`` setting). None: a failed implementation is skipped (no opinion)."""


DISPATCH_RULES: dict[str, HookRule] = {}
"""Hook name -> its rule, filled by :func:`spec` in source order."""


def spec(
    combine: Combine,
    *,
    returns: tuple[type, ...] = (),
    sync: bool = False,
    bounded: bool = True,
    on_failure: Callable[[str, str], Any] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a hook: a pluggy hookspec plus its combining rule (see the module docstring)."""

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        DISPATCH_RULES[fn.__name__] = HookRule(combine, returns, sync, bounded, on_failure)
        return hookspec(fn)

    return mark


# --- Contributions: called once when the plugin is registered (and again after a hot reload) ---


@spec("each", sync=True)
def register_tools(register: Callable[[Tool], None], api: HostAPI) -> None:
    """Register tools the model can call: ``register(Tool(...))`` once per tool. ``api`` gives
    the working directory, agent dir, settings and whether the project is trusted.

    Built-in tool names are reserved; a duplicate name is skipped with an ``extension_error``
    that names both plugins.
    """


@spec("each", sync=True)
def register_commands(register: Callable[[SlashCommand], None], api: HostAPI) -> None:
    """Register slash commands (``/name args`` in a ``prompt``): ``register(SlashCommand(...))``.

    A command runs immediately, even while the agent is streaming, and the prompt answers
    ``disposition:"handled"``. Duplicate names get ``:1``, ``:2`` suffixes.
    """


@spec("each", sync=True)
def register_providers(register: Callable[[ApiImpl | ProviderInfo], None], api: HostAPI) -> None:
    """Register LLM wire APIs (``ApiImpl``) and providers with their model catalogs (``ProviderInfo``)."""


@spec("each", sync=True)
def register_workflows(register: Callable[[WorkflowDefinition], None], api: HostAPI) -> None:
    """Register workflows (named pipelines of agent stages): ``register(WorkflowDefinition(...))``.

    Each step is a dict: ``{"name", "prompt"}`` (an agent run; ``{input}`` and
    ``{stages.<name>.output}`` are filled in) or ``{"name", "run"}`` where ``run`` is
    ``async def run(ctx) -> str`` (``ctx.input``, ``ctx.outputs``, ``ctx.api``, ``ctx.run_id``).
    Optional keys: ``models`` (fallback tiers, ``provider/model[:level]``), ``thinking``, ``tools``.
    The built-in ``workflows`` plugin runs them; ``/workflow`` lists them. A TOML file in a
    workflows directory of the same name wins over a registered definition.
    """


@spec("each", sync=True)
def register_exporters(register: Callable[[Exporter], None], api: HostAPI) -> None:
    """Register session exporters: ``register(Exporter(name, render, default_path))``.

    ``export_html`` uses the ``html`` exporter and ``atomic --export SESSION [OUT] --export-format
    NAME`` the one named. The built-in ``export_html`` plugin registers ``html``; a later plugin
    that registers the same name replaces it (or block the built-in with ``disabledPlugins``).
    """


@spec("each", sync=True)
def register_session_stores(register: Callable[[SessionStoreFactory], None], api: HostAPI) -> None:
    """Register session store kinds: ``register(SessionStoreFactory(kind, open))``.

    The ``sessionStore`` setting (or ``--session-store``) picks the kind, default ``jsonl``; the
    host calls ``open(StoreOptions)`` once, when it first needs its store. The built-in ``stores``
    plugin registers ``jsonl``, ``sqlite`` and ``memory``; a later plugin that registers the same
    kind replaces it. ``--no-session`` never asks: it always uses the in-memory store.
    """


# --- Host lifecycle ---


@spec("each")
def host_start(api: HostAPI) -> None:
    """The host has loaded every plugin and is about to serve. Start background work here."""


@spec("each")
def host_shutdown(api: HostAPI) -> None:
    """The host is exiting (stdin closed or a signal). Release resources; keep it quick."""


@spec("each", sync=True)
def plugin_unload(api: HostAPI) -> None:
    """Called on one plugin only, just before it is unregistered (hot reload or disable)."""


# --- Sessions ---


@spec("each")
def session_start(event: SessionStartEvent, api: HostAPI) -> None:
    """A session became active. ``event.reason``: startup | new | resume | fork | reload;
    ``event.previous_session_file`` when one was replaced."""


@spec("each")
def session_shutdown(event: SessionShutdownEvent, api: HostAPI) -> None:
    """The active session is about to be replaced or the host is exiting."""


@spec("first_cancel", returns=(Cancel,))
def session_before_switch(event: SessionBeforeSwitchEvent, api: HostAPI) -> Cancel | None:
    """Before ``new_session`` / ``switch_session`` / ``import_session``. ``event.reason`` is
    new | resume; ``event.target_session_file`` for resume. Return ``Cancel()`` to stop it;
    the first cancel wins and the command answers ``{"cancelled": true}``."""


@spec("first_cancel", returns=(Cancel,))
def session_before_fork(event: SessionBeforeForkEvent, api: HostAPI) -> Cancel | None:
    """Before ``fork`` (``event.position == "before"``, ``event.entry_id``) or ``clone``
    (``"at"``). Return ``Cancel()`` to stop it."""


@spec("first_cancel", returns=(Cancel,))
def session_before_tree(event: SessionBeforeTreeEvent, api: HostAPI) -> Cancel | None:
    """Before ``navigate_tree`` moves the leaf (``event.target_id``, ``event.old_leaf_id``,
    ``event.new_leaf_id``, ``event.summarize``, ``event.label``). Return ``Cancel()`` to stop it:
    nothing is summarised or moved and the command answers ``{"cancelled": true}``."""


@spec("each")
def session_tree(event: SessionTreeEvent, api: HostAPI) -> None:
    """``navigate_tree`` moved the leaf from ``event.old_leaf_id`` to ``event.new_leaf_id``;
    ``event.summary_entry`` is the ``branch_summary`` entry it appended, if any."""


@spec("each", sync=True)
def session_info_changed(event: SessionInfoChangedEvent, api: HostAPI) -> None:
    """The session name (``event.kind == "name"``, ``event.name``) or an entry's label
    (``"label"``, ``event.entry_id``, ``event.label``; None when cleared) changed."""


@spec("each", returns=(RecoverResult,))
def session_recover(event: SessionRecoverEvent, api: HostAPI) -> RecoverResult | None:
    """``start_pending_recovery`` for the active session (``event.reason``, ``event.session_id``):
    restore the background work an earlier process left unfinished (a workflow run, a worker).

    Runs before interrupted deliveries are replayed, once per loaded session. Return a
    ``RecoverResult`` (``notices``, ``completions``, ``resumed``) to add to the report, or None.
    """


# --- Input and turns ---


@spec("chain", returns=(InputResult,))
def input(event: InputEvent, api: HostAPI) -> InputResult | None:
    """See user input before the host does (``event.text``, ``event.images``, ``event.source``:
    rpc | extension, ``event.kind``: prompt | steer | follow_up).

    Return ``InputResult.handled()`` to consume it (disposition ``handled``),
    ``InputResult.transform(text, images)`` to replace it (transforms chain in call order),
    or ``None`` to pass.
    """


@spec("chain", returns=(AgentStartResult,))
def before_agent_start(event: BeforeAgentStartEvent, api: HostAPI) -> AgentStartResult | None:
    """A run is about to start for ``event.prompt``. Return ``AgentStartResult(system_prompt=...)``
    to override the run's system prompt (the last plugin that sets one wins) and/or
    ``AgentStartResult(messages=[...])`` to add custom messages (``customType``, ``content``,
    ``display``, …) after the user message. ``event.system_prompt`` / ``event.messages`` show what
    earlier plugins set."""


@spec("chain", returns=(ContextResult,))
def context(event: ContextEvent, api: HostAPI) -> ContextResult | None:
    """Edit the messages of each model call before they are sent (``event.messages``, host message
    shape; ``event.model``). Return ``ContextResult(messages)`` to send those instead; results chain
    in call order. The session itself is not changed: this is what the model sees, this once."""


@spec("chain", returns=(ProviderPayload,))
def before_provider_request(event: BeforeProviderRequestEvent, api: HostAPI) -> ProviderPayload | None:
    """A provider request's JSON body is built (``event.payload``, ``event.model``, ``event.url``),
    right before it is sent: every HTTP request of the host's adapters (runs, compaction, summaries)
    and of any adapter built on ``atomic_host.kit.llm.http.drive``. Mutate ``event.payload`` in
    place or return ``ProviderPayload(new)`` to replace it; results chain in call order."""


@spec("each")
def before_provider_headers(event: BeforeProviderHeadersEvent, api: HostAPI) -> None:
    """A provider request's headers (``event.headers``, lower-case names), after
    ``before_provider_request``. Mutate them: a new value adds or overrides a header, None (or
    deleting the key) leaves it out. Values that are not strings are dropped."""


@spec("each")
def after_provider_response(event: AfterProviderResponseEvent, api: HostAPI) -> None:
    """A provider answered (``event.status``, ``event.headers``, ``event.elapsed_ms``,
    ``event.attempt``), before the body is read: every attempt, failed ones (429, 5xx) included."""


@spec("chain", returns=(MessageEndResult,), sync=True)
def message_end(event: MessageEndEvent, api: HostAPI) -> MessageEndResult | None:
    """A message is finished (user, custom, assistant, toolResult), before ``message_end`` is sent
    and the message saved. Return ``MessageEndResult(message)`` with a message of the same role to
    replace it (a different role is reported and ignored). Runs for every message: keep it fast."""


@spec("each", returns=(str,), sync=True)
def system_prompt(event: SystemPromptEvent, api: HostAPI) -> str | None:
    """Contribute a section to the system prompt of each model call. ``event.tools`` lists the
    names of the tools the model sees. Return the text, or None to add nothing."""


@spec("each", sync=True)
def model_select(event: ModelSelectEvent, api: HostAPI) -> None:
    """The session's model changed (``event.model``, ``event.previous_model``, ``event.source``:
    set | cycle | fallback | restore)."""


@spec("each", sync=True)
def thinking_level_select(event: ThinkingLevelSelectEvent, api: HostAPI) -> None:
    """The session's thinking level changed (``event.level``, ``event.previous_level``)."""


@spec("each", sync=True)
def on_event(event: WireEvent, api: HostAPI) -> None:
    """Observe every agent event as sent on the wire (agent_start, message_update,
    tool_execution_end, …). Must be fast: it runs for every streamed delta."""


# --- Tools ---


@spec("first_block", returns=(ToolCallDecision,), on_failure=ToolCallDecision.failed_closed)
def tool_call(event: ToolCallEvent, api: HostAPI) -> ToolCallDecision | None:
    """Gate a tool call before it runs (``event.tool_name``, ``event.tool_call_id``, ``event.input``).

    Mutate ``event.input`` in place to rewrite the arguments, or return
    ``ToolCallDecision(block=True, reason=...)`` to refuse it: the model gets an error
    result with the reason. The first block wins. ``ToolCallDecision(terminate=True)`` (with or
    without ``block``) ends the run after this turn's tool batch: no further model call.

    A gate that fails (raises, exits, times out, returns something else) is skipped, unless it is
    fail-closed (``@fail_closed``, or the ``hooks.failClosed`` setting for every gate): then the
    call is blocked, and with the setting also while any extension failed to load.
    """


@spec("patch", returns=(ToolPatch, ToolResult))
def tool_result(event: ToolResultEvent, api: HostAPI) -> ToolPatch | ToolResult | None:
    """Patch a tool result before the model sees it (``event.result`` is a ToolResult, with
    earlier plugins' patches applied). Return ``ToolPatch(content=..., details=..., is_error=...)``
    (any subset) or a whole ``ToolResult`` to replace it."""


@spec("first_result", returns=(BashResult,))
def user_bash(event: UserBashEvent, api: HostAPI) -> BashResult | None:
    """Intercept a direct ``bash``/``user_bash`` command (``event.command``), before it runs.

    Return ``BashResult(output, exit_code, cancelled, truncated)`` to answer it yourself (nothing
    runs, no deltas are streamed; the result is recorded as the BashExecutionMessage), or
    ``BashResult(operations=...)`` (a :class:`~atomic_host.contract.results.BashOperations`) to
    run it your way — in a container, over ssh — while the host streams the deltas, truncates,
    aborts and answers as for the local shell. ``None`` lets the host run it locally. The first
    ``BashResult`` wins; any other result (a dict) is reported as ``extension_error`` and ignored.
    """


# --- Compaction ---


@spec("each")
def session_compact(event: SessionCompactEvent, api: HostAPI) -> None:
    """A compaction boundary was written (``event.reason``: manual | threshold | overflow;
    ``event.result``: the compaction result as sent in ``compaction_end``)."""


@spec("first_result", returns=(Cancel, CompactResult))
def session_before_compact(event: SessionBeforeCompactEvent, api: HostAPI) -> Cancel | CompactResult | None:
    """Compaction is about to summarise the region the strategy prepared (``event.lines``,
    ``event.protected``, ``event.first_kept_entry_id``, ``event.parameters``). Return ``Cancel()``
    to refuse compaction, or ``CompactResult(compacted_text)`` to supply the compacted text yourself
    (rung ``extension``, no model call). The first result wins; any other type is reported and ignored."""


@spec("first_result", returns=(Compaction, Failure, Cancel), bounded=False)
def compact(event: CompactEvent, api: HostAPI) -> Compaction | Failure | Cancel | None:
    """The compaction strategy: compact ``event.branch_entries`` (manual ``compact``, or automatic:
    ``event.reason`` threshold | overflow). Return a ``Compaction`` (the boundary the host writes),
    ``Failure(message)`` (``nothing_to_do=True``: too little to compact) or ``Cancel()``; None lets
    the next implementation decide. The built-in verbatim-lines strategy is the ``trylast`` default.

    Ask a model through ``event.requesters`` (the session's, then ``fallbackModels``); let
    ``session_before_compact`` decide through ``await event.before_compact(...)``. Not time-bounded:
    ``abort_compaction`` cancels it.
    """


# --- Summaries ---


@spec("first_result", returns=(Summary, Failure), bounded=False)
def summarize(event: SummarizeEvent, api: HostAPI) -> Summary | Failure | None:
    """Write a summary: ``event.kind`` session (the background one-line summary after a run) |
    branch (``navigate_tree`` with ``summarize``: the abandoned branch, ``event.instructions``).

    ``event.entries`` / ``event.messages`` are what to summarise; ``event.requester`` asks the
    session's model. Return ``Summary(text, usage)`` (an empty text stores nothing),
    ``Failure(message)`` (a branch summary's ``navigate_tree`` answers it), or None for the next
    implementation. The built-in ``summaries`` plugin is the ``trylast`` default. Not time-bounded.
    """
