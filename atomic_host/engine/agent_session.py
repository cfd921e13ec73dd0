"""AgentSession: one open session and the agent working in it — prompts, queues, abort, retry,
model and thinking selection, and the in-memory context the model sees."""

from __future__ import annotations

import asyncio
import contextlib
import time
from itertools import repeat
from typing import TYPE_CHECKING, Any

from atomic_host.contract.errors import HostError as CommandFailed
from atomic_host.contract.events import (
    BeforeAgentStartEvent,
    ContextEvent,
    InputEvent,
    MessageEndEvent,
    ModelSelectEvent,
    SessionInfoChangedEvent,
    SessionShutdownEvent,
    SessionStartEvent,
    ThinkingLevelSelectEvent,
)
from atomic_host.contract.providers import StreamOptions
from atomic_host.contract.tools import ToolContext
from atomic_host.engine import summaries
from atomic_host.engine.model_choice import scoped_models, startup_choice
from atomic_host.engine.queues import MessageQueues
from atomic_host.engine.retry import RetryAndFallback
from atomic_host.engine.system_prompt import build_system_prompt, load_context_files
from atomic_host.kit.lazy import loaded
from atomic_host.kit.log import log
from atomic_host.kit.messages import message_text

if TYPE_CHECKING:
    from collections.abc import Callable

    from atomic_host.agent.ports import StreamFn
    from atomic_host.contract.tools import Tool, ToolResult
    from atomic_host.engine.services import HostServices
    from atomic_host.kit.sessions.tree import Session
    from atomic_host.plugins.dispatch import Dispatcher
    from atomic_host.plugins.registry import ToolRegistry

DELIVERIES = frozenset({None, "steer", "followUp", "nextTurn", "interrupt"})
ABORT_GRACE_S = 1.0
"""How long abort lets a provider stream end on its own before cancelling it."""
BUSY = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."


def now_ms() -> int:
    return int(time.time() * 1000)


class AgentSession:
    """The active session plus the agent's state; the frontends call into it. It implements the
    loop's :class:`~atomic_host.agent.ports.RunPorts`."""

    def __init__(self, rt: HostServices, session: Session) -> None:
        self.rt = rt
        self.session = session
        self.cwd: str = getattr(session, "cwd", None) or rt.cwd
        self.model: dict[str, Any] | None = None
        self.thinking_level = "off"
        self._messages: list[dict[str, Any]] | None = []
        self._context_branch: list[dict[str, Any]] = []
        self.queues = MessageQueues(session, self.emit_queue, rt.settings.steering_mode, rt.settings.follow_up_mode)
        """The steering and follow-up queues and their journal (engine/queues.py)."""
        self.next_turn: list[dict[str, Any]] = []
        """Custom messages sent with ``deliverAs: "nextTurn"``: they ride with the next prompt."""
        self._abort_count = 0
        self.auto_retry = rt.settings.retry_enabled
        self.auto_compaction = rt.settings.compaction_enabled
        self.abort_signal = asyncio.Event()  # each run gets its own (start_drive)
        self.drive_task: asyncio.Task[None] | None = None
        self.retry = RetryAndFallback(self)
        """Auto-retry and fallback models after a failed run (engine/retry.py)."""
        self.model_fallback_message: str | None = None  # the saved default model is gone: prompts are refused
        self.deferred_bash: list[dict[str, Any]] = []
        self.in_provider_stream = False
        self.cancelled_for_abort = False
        self.recovery_report: dict[str, Any] | None = None
        self.recovery_task: asyncio.Future[dict[str, Any]] | None = None
        self.summary_task: asyncio.Task[None] | None = None
        self._temp_dir: str | bool | None = False
        # compaction (atomic_host/engine/compaction.py): the running job, one overflow recovery per turn
        self.compaction_job: Any = None
        self.overflow_recovered = False
        self.tool_names: set[str] | None = None
        """A narrower tool selection for this session only (workflow stages); None = the host's."""

    # --- construction ---

    @classmethod
    async def open_initial(cls, rt: HostServices) -> AgentSession:
        """Startup: --session / --continue / --no-session / a new session, then model selection."""
        opts = rt.options
        store = rt.store
        session = None
        # Reading and parsing a long session file takes a while (a 20,000-turn one: ~0.3 s of CPU):
        # in a thread, like every other store call, so the watchdog and the stdin reader keep going.
        if opts.session:
            session = await asyncio.to_thread(open_session_ref, store, opts.session)
        elif opts.continue_session:
            session = await asyncio.to_thread(store.most_recent, rt.cwd)
        fresh = session is None
        if fresh:
            session = store.new_session(rt.cwd)
        agent = cls(rt, session)
        agent.rebuild_context(restore_model=not fresh)
        agent.select_startup_model(fresh)
        rt.session = agent  # active before session_info_changed/session_start: hooks may use api.session_id, …
        if opts.name:
            agent.set_session_name(opts.name)
        await agent.fire_session_start("startup")
        return agent

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The in-memory context. Built on first use from the branch captured by
        ``rebuild_context``: switching to a long session does not pay for it up front."""
        if self._messages is None and not self._context_branch:
            self._messages = []
        if self._messages is None:
            from atomic_host.session.context import build_session_context

            self._messages = list(build_session_context(self._context_branch).messages)
            self._context_branch = []
        return self._messages

    @messages.setter
    def messages(self, value: list[dict[str, Any]]) -> None:
        self._messages, self._context_branch = value, []

    @property
    def message_count(self) -> int:
        """``len(self.messages)`` without building a context not built yet: right after a switch
        the session's counts give it (``get_state`` after opening a long session only counts)."""
        branch, entries = self._context_branch, self.session.entries
        # the branch captured by rebuild_context is still every entry of the session
        if self._messages is None and branch and len(branch) == len(entries) and branch[-1] is entries[-1]:
            from atomic_host.session.context import branch_message_count

            count = branch_message_count(self.session)
            if count is not None:
                return count
        return len(self.messages)

    def rebuild_context(self, restore_model: bool = True) -> None:
        """Rebuild the in-memory context from the session's current branch (messages lazily)."""
        branch = self.session.branch()
        self._messages, self._context_branch = None, branch
        if restore_model:
            model, level = _branch_settings(branch)
            if model:
                found = self.rt.models.find(model[0], model[1])
                if found is not None:
                    self.model = found
            if level:
                self.thinking_level = level

    def select_startup_model(self, fresh: bool) -> None:
        rt = self.rt
        choice = startup_choice(rt.options, rt.settings, rt.models, fresh, self.model, self.thinking_level)
        self.model, self.thinking_level = choice.model, choice.thinking_level
        self.model_fallback_message = choice.fallback_message
        if fresh:
            self.record_initial_settings()
        elif not any(e.get("type") == "thinking_level_change" for e in self.session.branch()):
            self.session.append("thinking_level_change", thinkingLevel=self.thinking_level)

    def record_initial_settings(self) -> None:
        """A new session starts with ``model_change`` (when a model is set) and ``thinking_level_change``."""
        if self.model is not None:
            self.session.append("model_change", provider=self.model["provider"], modelId=self.model["id"])
        self.session.append("thinking_level_change", thinkingLevel=self.thinking_level)

    async def fire_session_start(self, reason: str, previous: str | None = None) -> None:
        await self.rt.hooks.acall("session_start", event=SessionStartEvent(reason, previous))

    # --- events and messages ---

    def emit(self, event: dict[str, Any], line: str | None = None) -> None:
        """Send an event to the client (``line``: its JSON, when already encoded) and to observers."""
        self.rt.out.send(event, line)
        if self.rt.hooks.has_impls("on_event"):
            self.rt.hooks.call("on_event", event=event)

    def record_message(self, message: dict[str, Any]) -> None:
        """Persist a finished message, then add it to the context: when the write fails (disk full,
        another process holds the session) it raises and the context stays what the file says."""
        if message.get("role") == "custom":
            fields = {k: v for k, v in message.items() if k in ("customType", "content", "display", "details")}
            self.session.append("custom_message", **fields)
        else:
            self.session.append_message(message)
        self.messages.append(message)

    def deliver_message(self, message: dict[str, Any]) -> dict[str, Any]:
        """A user/custom message enters the run: persistence, events, dequeue. Saved first, so a
        message the session could not store is never shown as delivered. Returns the message as
        saved (``message_end`` hooks may have replaced it)."""
        final = self.end_message(message)
        self.record_message(final)
        self.emit({"type": "message_start", "message": message})
        self._dequeue(message)
        self.emit({"type": "message_end", "message": final})
        return final

    def end_message(self, message: dict[str, Any]) -> dict[str, Any]:
        """``message_end`` hooks may replace a finished message (same role); returns the message."""
        if not self.rt.hooks.has_impls("message_end"):
            return message
        event = MessageEndEvent(message)
        self.rt.hooks.call("message_end", event=event)
        return event.message

    def note_assistant(self, message: dict[str, Any]) -> None:
        self.retry.answered(message)

    # --- provider context ---

    def model_tools(self) -> list[Any]:
        """The tools the model sees in this session: the host's selection, narrowed by ``tool_names``."""
        tools = self.rt.tools.for_model()
        return tools if self.tool_names is None else [t for t in tools if t.name in self.tool_names]

    async def llm_context(self, system_prompt: str | None) -> dict[str, Any]:
        """The provider context of the next model call; ``context`` hooks may edit its messages."""
        from atomic_host.session.context import convert_to_llm

        messages = self.messages
        if self.rt.hooks.has_impls("context"):
            event = ContextEvent(list(messages), self.model)
            await self.rt.hooks.acall("context", event=event)
            messages = event.messages
        messages = convert_to_llm(messages, repair_trailing=True)
        if self.rt.settings.bool("images.blockImages", False):
            messages = [_replace_images(m, "Image reading is disabled.") for m in messages]
        elif "image" not in (self.model or {}).get("input", ["text", "image"]):
            messages = [_replace_images(m, "(image omitted: this model does not accept images)") for m in messages]
        tools = self.model_tools()
        if not all(t.schema_built for t in tools):
            # The first request imports each tool's module and builds its pydantic schema: 0.1 s
            # and more on a busy machine, so in a thread, where the loop stays free for abort.
            await asyncio.to_thread(lambda: [t.json_schema() for t in tools])
        if not system_prompt:
            # The context files are stat-ed each request (an edit shows on the next one) and read
            # only when changed, a big one in a thread: the loop never waits on their I/O.
            context = await load_context_files(self.rt.agent_dir, self.cwd)
            rt = self.rt
            system_prompt = build_system_prompt(rt.options, rt.hooks, tools, self.cwd, context)
        return {
            "systemPrompt": system_prompt,
            "messages": messages,
            "tools": [t.to_llm() for t in tools],
        }

    def stream_options(self) -> StreamOptions:
        """Neutral provider options from the session state and settings."""
        model = self.model or {}
        rt, settings, level = self.rt, self.rt.settings, self.thinking_level
        return StreamOptions(
            api_key=rt.models.resolve_api_key(model.get("provider", "")),
            reasoning=None if level == "off" or not model.get("reasoning") else level,
            thinking_budgets=settings.get("thinkingBudgets"),
            max_tokens=model.get("maxTokens"),
            signal=self.abort_signal,
            session_id=self.session.id,
            headers=rt.models.request_headers(model) if model else {},
            stream_deadline_s=settings.int("streamDeadlineMs", 300000) / 1000,
            max_retries=settings.int("retry.provider.maxRetries", 0),
            max_retry_delay_ms=settings.int("retry.provider.maxRetryDelayMs", 60000),
            http_client=rt.http_client() if model and rt.models.needs_http(model["api"]) else None,
        )

    def stream_fn(self, api: str) -> StreamFn | None:
        return self.rt.models.stream_fn(api)

    # --- tools (the loop's ToolPorts) ---

    @property
    def tools(self) -> ToolRegistry:
        return self.rt.tools

    @property
    def hooks(self) -> Dispatcher:
        return self.rt.hooks

    def tool_context(
        self,
        tool: Tool,
        call_id: str,
        signal: asyncio.Event,
        on_update: Callable[[ToolResult], None],
        call_tool: Callable[[str, dict[str, Any]], Any],
    ) -> ToolContext:
        rt = self.rt
        return ToolContext(
            cwd=self.cwd,
            session_id=self.session.id,
            tool_call_id=call_id,
            signal=signal,
            on_update=on_update,
            ui=rt.ui,
            temp_dir=self.temp_dir,
            artifact_dirs=self.artifact_dirs,
            call_tool=call_tool,
            list_tools=rt.tools.callable_from_code,
            deferred_tools=rt.tools.deferred,
            load_tools=rt.tools.load,
            settings=rt.settings.data,
            state=rt.tool_state.setdefault(tool.plugin, {}),
        )

    def artifact_dirs(self) -> list[str]:
        """Where this session's full outputs are saved: its temp dir (bash logs) and the tool-results dirs."""
        from pathlib import Path

        dirs = []
        location = self.session.location
        if location and location.endswith(".jsonl"):
            dirs.append(str(Path(location).parent / "tool-results"))
        temp = self.temp_dir()
        if temp:
            dirs += [temp, str(Path(temp) / "tool-results")]
        return dirs

    def temp_dir(self) -> str | None:
        if self._temp_dir is False:
            from atomic_host.kit.tempdirs import session_temp_dir

            path = session_temp_dir(self.session.id)
            self._temp_dir = str(path) if path else None
        return self._temp_dir  # type: ignore[return-value]

    # --- state ---

    @property
    def is_streaming(self) -> bool:
        return self.drive_task is not None and not self.drive_task.done()

    def require_model(self) -> dict[str, Any]:
        if self.model is None and self.model_fallback_message:
            raise CommandFailed(self.model_fallback_message)
        if self.model is None:
            raise CommandFailed("No model selected. Use set_model, --model or configure an API key.")
        provider = self.model["provider"]
        if not self.rt.models.auth_status(provider).get("configured"):
            raise CommandFailed(
                f"No API key found for {provider}. Set it with --api-key, auth.json or the "
                "provider's environment variable."
            )
        return self.model

    # --- prompting ---

    async def prompt(
        self,
        text: str,
        images: list[dict[str, Any]] | None,
        behavior: str | None,
        source: str = "rpc",
        literal: bool = False,
    ) -> str:
        """The prompt pipeline of semantics §3.1; returns the disposition. ``literal`` (extension
        prompts): no slash-command dispatch, no template or skill expansion."""
        images = await self.checked_images(images)
        if text.startswith("/") and not literal:
            name, _, args = text[1:].partition(" ")
            command = self.rt.commands.get(name)
            if command is not None and not command.is_expansion:
                await self.run_command(command, args)
                return "handled"
        summaries.cancel(self)
        if self.queues.paused:
            self._enqueue("followUp" if behavior == "followUp" else "steer", text, images)
            return "queued"
        result = await self.apply_input_hooks(text, images, "prompt", source)
        if result is None:
            return "handled"
        text, images = result
        if not literal:
            text = self.expand_command(text)
        if self.is_streaming:
            if behavior not in ("steer", "followUp"):
                raise CommandFailed(BUSY)
            self._enqueue(behavior, text, images)
            return "queued"
        self.flush_deferred_bash()
        self.retry.restore_user_model()
        await self._load_run_machinery(self.require_model())
        from atomic_host.engine import compaction  # loaded: see _load_run_machinery

        await compaction.before_prompt(self)  # compaction: threshold check before a new prompt
        system_prompt: str | None = None
        extra: list[dict[str, Any]] = []
        if self.rt.hooks.has_impls("before_agent_start"):  # else no override, no messages: the event's defaults
            start = BeforeAgentStartEvent(text, images)
            await self.rt.hooks.acall("before_agent_start", event=start)
            system_prompt = start.system_prompt
            extra = [_custom(m) for m in start.messages if isinstance(m, dict)]
        if self.is_streaming:  # a hook started a run meanwhile (send_message with trigger_turn): queue
            self._enqueue("followUp" if behavior == "followUp" else "steer", text, images)
            return "queued"
        # user message, then nextTurn custom messages, then before_agent_start ones (semantics §3.1.10);
        # the run's first steering poll adds what was queued before (and held by an abort).
        next_turn, self.next_turn = self.next_turn, []
        self.queues.held = False
        self.start_drive([make_user_message(text, images), *next_turn, *extra], system_prompt)
        return "started"

    async def queue_message(self, kind: str, text: str, images: list[dict[str, Any]] | None) -> str:
        """``steer`` / ``follow_up``: never extension commands; queued (or handled by an input hook)."""
        images = await self.checked_images(images)
        if text.startswith("/"):
            name = text[1:].partition(" ")[0]
            command = self.rt.commands.get(name)
            if command is not None and not command.is_expansion:
                raise CommandFailed(
                    f'Extension command "/{name}" cannot be queued. Use prompt() or execute the command '
                    "when not streaming."
                )
        result = await self.apply_input_hooks(text, images, "steer" if kind == "steer" else "follow_up", "rpc")
        if result is None:
            return "handled"
        text, images = result
        text = self.expand_command(text)
        self._enqueue(kind, text, images)
        if not self.is_streaming and self.messages and not self.queues.held and not self.queues.paused:
            self.start_drive(self.next_queued(), None, poll_steering_first=False)
        return "queued"

    async def checked_images(self, images: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        """``images`` with each one checked (real base64 of a PNG/JPEG/GIF/WebP that decodes) and, with
        ``images.autoResize`` (default on), shrunk to fit 2000x2000; a bad one fails the command, naming it.
        In a thread: a 30 MB screenshot takes a while to decode and shrink."""
        if not images:
            return images
        auto_resize = self.rt.settings.bool("images.autoResize", True)

        def check_all() -> list[dict[str, Any]]:
            import base64

            from atomic_host.kit.images import ImageProblem, decode_base64, prepare

            out = []
            for i, block in enumerate(images):
                try:
                    data = decode_base64(block.get("data"))
                    shrunk, mime, note = prepare(data, block.get("mimeType"), auto_resize=auto_resize)
                except ImageProblem as e:
                    raise CommandFailed(f"images[{i}]: {e}") from None
                if note is None and mime == block.get("mimeType"):
                    out.append(block)  # kept verbatim
                else:
                    out.append({**block, "data": base64.b64encode(shrunk).decode("ascii"), "mimeType": mime})
                    if note:
                        log.info(f"prompt image {i}: {note}")
            return out

        return await asyncio.to_thread(check_all)

    async def apply_input_hooks(
        self, text: str, images: list[dict[str, Any]] | None, kind: str, source: str
    ) -> tuple[str, list[dict[str, Any]] | None] | None:
        """Chain ``input`` hooks: None when one handled the input, else the (transformed) text/images."""
        if not self.rt.hooks.has_impls("input"):
            return text, images
        event = InputEvent(text, images, source, kind)
        if await self.rt.hooks.acall("input", event=event) is not None:
            return None  # handled: the chain's only result that ends it
        return event.text, event.images

    async def _load_run_machinery(self, model: dict[str, Any]) -> None:
        """What a run imports or builds on first use, done in a thread: the agent loop, tool
        execution and the compaction driver (they load with the first prompt, not before the first
        get_state: issue 12, startup), the model's stream module and the shared HTTP client (a TLS
        context: the CA bundle is read). On the loop, each would stall it (and ``abort``) while it
        loads, or wait there for the RPC warm-up thread that is importing it. Cheap once loaded."""
        await loaded("atomic_host.agent.loop", "atomic_host.agent.tool_exec", "atomic_host.engine.compaction")
        models = self.rt.models
        if (module := models.stream_module(model["api"])) is not None:
            with contextlib.suppress(ImportError):  # stream_fn reports a broken module when the run asks
                await loaded(module)
        if models.needs_http(model["api"]) and not self.rt.has_http_client():
            await asyncio.to_thread(self.rt.http_client)

    def expand_command(self, text: str) -> str:
        """Expand ``/template args`` and ``/skill:name args``; anything else is returned as is."""
        if not text.startswith("/"):
            return text
        name, _, args = text[1:].partition(" ")
        command = self.rt.commands.get(name)
        if command is None or not command.is_expansion:
            return text
        try:
            return command.get_expander()(args)
        except Exception as exc:
            self.rt.extension_error(command.path or command.plugin, "expand", str(exc) or type(exc).__name__)
            return text

    async def run_command(self, command: Any, args: str) -> None:
        import inspect

        try:
            result = command.get_handler()(args, self.rt.api)
            if inspect.isawaitable(result):
                await result
        except Exception as exc:
            log.warning(f"command /{command.name} failed: {exc}")
            self.rt.extension_error(f"command:{command.name}", "command", str(exc) or type(exc).__name__)

    async def submit_extension_prompt(self, text: str, deliver_as: str | None) -> str:
        """``api.send_user_message``: a literal prompt with source ``extension`` (semantics §5.3).
        While streaming, ``deliver_as`` (steer | followUp) says how to queue it; without it the
        prompt is refused like any other (the BUSY error)."""
        if deliver_as not in (None, "steer", "followUp"):
            raise ValueError(f"deliver_as must be 'steer' or 'followUp', got {deliver_as!r}")
        return await self.prompt(text, None, deliver_as, source="extension", literal=True)

    def send_custom_message(
        self,
        custom_type: str,
        content: Any,
        *,
        display: bool,
        details: Any,
        trigger_turn: bool,
        deliver_as: str | None,
        exclude_from_context: bool,
    ) -> asyncio.Future[None]:
        """``api.send_message`` (semantics §5.3 sendMessage). Acts at once, so synchronous hooks
        (``on_event``) can call it; the returned future is done, except for an ``interrupt`` of a
        running run, where it resolves once the aborted run has ended and the new one started.

        - ``nextTurn``: held, and delivered after the user message of the next prompt;
        - ``interrupt``: abort the running run (the queues are kept and held), then run with it;
        - streaming: queued, as steering unless ``deliver_as == "followUp"``;
        - idle with ``trigger_turn``: a run starts with it;
        - idle otherwise: appended (message_start/end, persisted as ``custom_message``).
        """
        if deliver_as not in DELIVERIES:
            raise ValueError(f"deliver_as must be one of {', '.join(sorted(DELIVERIES - {None}))}, got {deliver_as!r}")
        message = {
            "role": "custom",
            "customType": custom_type,
            "content": content,
            "display": display,
            "timestamp": now_ms(),
        }
        if details is not None:
            message["details"] = details
        if exclude_from_context:
            message["excludeFromContext"] = True
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        if deliver_as == "nextTurn":
            self.next_turn.append(message)
        elif deliver_as == "interrupt":
            self.require_model()
            if self.is_streaming:
                return asyncio.ensure_future(self._interrupt(message))
            self.start_drive([message], None)
        elif self.is_streaming:
            self._enqueue_message("followUp" if deliver_as == "followUp" else "steer", message, None)
        elif trigger_turn:
            self.require_model()
            self.start_drive([message], None)
        else:
            self.deliver_message(message)
        return done

    async def _interrupt(self, message: dict[str, Any]) -> None:
        """Stop the running run like ``abort`` does, then start one that delivers ``message``."""
        aborts = self._abort_count
        task = self.drive_task
        self._signal_abort()
        if task is not None:
            await asyncio.shield(task)
        if self.rt.session is not self:
            return  # the session was replaced meanwhile
        if self._abort_count != aborts or self.is_streaming:
            # A client abort (or another run) came in between: keep the message queued, not lost.
            self._enqueue_message("steer", message, None)
            return
        self.start_drive([message], None)

    def append_custom_entry(self, custom_type: str, data: Any) -> dict[str, Any]:
        entry = self.session.append("custom", customType=custom_type, data=data)
        self.emit({"type": "entry_appended", "entry": entry})
        return entry

    # --- the run driver: runs, auto-retry, queued continuations ---

    def start_drive(
        self, messages: list[dict[str, Any]], system_prompt: str | None, poll_steering_first: bool = True
    ) -> None:
        """Start a run with ``messages``. ``poll_steering_first=False`` when they were just taken
        from the steering queue (they stay listed until delivered, so a first poll would repeat them)."""
        if self.rt.pending_reload:
            self.rt.apply_pending_reloads()
        # Imported here, with the first run (the other modules of a run load then too): not on startup's path.
        from atomic_host.kit.llm.abort import AbortSignal

        self.abort_signal = AbortSignal()  # a provider stream watches it without a task (kit/llm/abort.py)
        self.overflow_recovered = False  # compaction: a new turn may recover from overflow once
        self.drive_task = asyncio.create_task(self._drive(messages, system_prompt, poll_steering_first))

    async def _drive(
        self, messages: list[dict[str, Any]], system_prompt: str | None, poll_steering_first: bool
    ) -> None:
        from atomic_host.agent.loop import run_agent
        from atomic_host.engine import compaction

        try:
            while True:
                await run_agent(self, messages, system_prompt, poll_steering_first)
                messages, poll_steering_first = [], True
                if self.abort_signal.is_set():
                    break
                if await compaction.after_run(self):  # compaction: overflow compacted, continue
                    continue
                last = next((m for m in reversed(self.messages) if m.get("role") == "assistant"), None)
                if (
                    last is not None
                    and last.get("stopReason") == "error"
                    and (await self.retry.wait_and_retry(last) or self.retry.fall_back(last))
                ):
                    continue  # the same turn again, after the retry delay or with the next fallback model
                if self.abort_signal.is_set():  # abort during the retry delay: the queue stays held
                    break
                await asyncio.sleep(0)  # between runs too: a run that never suspended must not starve the reader
                if self.rt.pending_reload:
                    self.rt.apply_pending_reloads()
                messages, poll_steering_first = self.next_queued(), False
                if not messages:
                    break
        except OSError as exc:  # the session could not be written (disk full, locked elsewhere): say so
            log.warning(f"could not save the session: {exc}")
            self._report_unsaved(exc)
        except Exception as exc:  # a bug in the loop must not kill the host
            log.warning(f"agent run failed: {type(exc).__name__}: {exc}")
            self.emit({"type": "agent_end", "messages": []})
        finally:
            # Settled: from here on the session is idle, also for plugins that react to agent_settled
            # (a send_message from on_event then appends or starts a new run instead of queueing).
            if self.drive_task is asyncio.current_task():
                self.drive_task = None
            self.emit({"type": "agent_settled"})
            if not self.abort_signal.is_set() and self.drive_task is None:
                summaries.schedule(self)

    def _report_unsaved(self, exc: BaseException) -> None:
        """End a run whose session write failed with an error assistant message the client can
        show (like a provider error). It is not saved or added to the context: it could not be."""
        from atomic_host.kit.llm.complete import failed

        message = failed(f"Could not save the session: {exc}", self.model or {})
        self.emit({"type": "message_start", "message": message})
        self.emit({"type": "message_end", "message": message})
        self.emit({"type": "agent_end", "messages": [message]})

    def abort_retry(self) -> None:
        self.retry.cancel_wait()

    def _signal_abort(self) -> None:
        """Ask the running run to stop: retry delay, provider stream, tools, automatic compaction.
        The queues are kept and held: nothing queued runs until the next prompt (semantics §3.4)."""
        self.abort_signal.set()
        self.abort_retry()
        from atomic_host.engine import compaction

        compaction.cancel_automatic(self)  # compaction: a threshold/overflow run inside this run
        if self.is_streaming:
            self.queues.held = True

    async def abort(self) -> None:
        """Cancel the retry delay, the stream and running tools; wait until idle; keep the queues."""
        self._abort_count += 1
        task = self.drive_task
        self._signal_abort()
        if task is None or task.done():
            return  # nothing running: a no-op
        done, _ = await asyncio.wait({task}, timeout=ABORT_GRACE_S)
        if not done and self.in_provider_stream:
            # A provider stream that ignores the abort signal: cancel it (stream_assistant turns
            # the cancellation into the aborted assistant message and the run ends normally).
            log.warning("provider stream ignored abort; cancelling it")
            self.cancelled_for_abort = True
            task.cancel()
        await asyncio.shield(task)

    async def wait_idle(self) -> None:
        while self.drive_task is not None and not self.drive_task.done():
            await asyncio.shield(self.drive_task)

    # --- queues (engine/queues.py) ---

    def _enqueue(self, kind: str, text: str, images: list[dict[str, Any]] | None) -> None:
        message = make_user_message(text, images)
        self.queues.enqueue(kind, message, message_text(message))

    def _enqueue_message(self, kind: str, message: dict[str, Any], text: str | None) -> None:
        self.queues.enqueue(kind, message, text)

    @property
    def steering(self) -> list[str]:
        """Queued steering texts, as listed in ``queue_update``."""
        return self.queues.steering

    @property
    def follow_up(self) -> list[str]:
        """Queued follow-up texts, as listed in ``queue_update``."""
        return self.queues.follow_up

    def emit_queue(self) -> None:
        self.emit({"type": "queue_update", "steering": self.steering, "followUp": self.follow_up})

    def _dequeue(self, message: dict[str, Any]) -> None:
        self.queues.take(message)

    def poll_steering(self) -> list[dict[str, Any]]:
        return self.queues.poll_steering()

    def poll_follow_up(self) -> list[dict[str, Any]]:
        return self.queues.poll_follow_up()

    def next_queued(self) -> list[dict[str, Any]]:
        """What a new turn delivers from the queue: steering first, else follow-ups."""
        return self.queues.next_queued()

    def clear_queue(self) -> dict[str, list[str]]:
        return self.queues.clear()

    def resume_queue(self) -> bool:
        return self.queues.resume()

    # --- bash messages ---

    def add_bash_message(self, message: dict[str, Any]) -> None:
        """Record a direct-bash result: now when idle, at the next prompt while streaming. No event."""
        if self.is_streaming:
            self.deferred_bash.append(message)
        else:
            self.messages.append(message)
            self.session.append_message(message)

    def flush_deferred_bash(self) -> None:
        for message in self.deferred_bash:
            self.messages.append(message)
            self.session.append_message(message)
        self.deferred_bash.clear()

    # --- model and thinking ---

    def set_model(self, provider: str, model_id: str, persist: bool = False, source: str = "set") -> dict[str, Any]:
        from atomic_host.core.models.thinking import clamp

        model = next((m for m in self.rt.models.available() if m["provider"] == provider and m["id"] == model_id), None)
        if model is None:
            raise CommandFailed(f"Model not found: {provider}/{model_id}")
        previous = self.model
        self.model = model
        self.model_fallback_message = None
        self.session.append("model_change", provider=provider, modelId=model_id)
        level = clamp(model, self.thinking_level)
        if level != self.thinking_level:
            self._set_level(level)
        self.announce_model(model, previous, source)
        if persist:
            self.rt.settings.save_global("defaultProvider", provider)
            self.rt.settings.save_global("defaultModel", model_id)
            self.rt.settings.save_global("defaultThinkingLevel", self.thinking_level)
        return model

    def announce_model(self, model: dict[str, Any], previous: dict[str, Any] | None, source: str) -> None:
        """``model_changed`` to the client, ``model_select`` to plugins."""
        self.emit({"type": "model_changed", "model": model, "previousModel": previous, "source": source})
        if self.rt.hooks.has_impls("model_select"):
            self.rt.hooks.call("model_select", event=ModelSelectEvent(model, previous, source))

    def _set_level(self, level: str) -> None:
        previous, self.thinking_level = self.thinking_level, level
        self.session.append("thinking_level_change", thinkingLevel=level)
        self.emit({"type": "thinking_level_changed", "level": level})
        if self.rt.hooks.has_impls("thinking_level_select"):
            self.rt.hooks.call("thinking_level_select", event=ThinkingLevelSelectEvent(level, previous))

    def set_thinking_level(self, level: str, persist: bool = False) -> dict[str, Any]:
        from atomic_host.core.models.thinking import clamp

        effective = clamp(self.model, level) if self.model else level
        if effective != self.thinking_level:
            self._set_level(effective)
        if persist:
            self.rt.settings.save_global("defaultThinkingLevel", effective)
        data: dict[str, Any] = {"level": effective}
        if self.model:
            data.update(provider=self.model["provider"], modelId=self.model["id"])
        return data

    def cycle_thinking_level(self) -> dict[str, Any] | None:
        from atomic_host.core.models.thinking import next_level

        if not self.model:
            return None
        level = next_level(self.model, self.thinking_level)
        if level is None:
            return None
        self._set_level(level)
        return {"level": level}

    def scoped_models(self) -> list[dict[str, Any]]:
        """The models ``--models`` / ``enabledModels`` select (empty: no scope)."""
        return scoped_models(self.rt.options, self.rt.settings, self.rt.models)

    def cycle_model(self, direction: str | None, persist: bool) -> dict[str, Any] | None:
        scoped = self.scoped_models()
        candidates = scoped or self.rt.models.available()
        if len(candidates) < 2:
            return None
        keys = [(m["provider"], m["id"]) for m in candidates]
        current = (self.model["provider"], self.model["id"]) if self.model else None
        index = keys.index(current) if current in keys else 0
        step = -1 if direction == "backward" else 1
        target = candidates[(index + step) % len(candidates)]
        self.set_model(target["provider"], target["id"], persist=persist, source="cycle")
        return {"model": self.model, "thinkingLevel": self.thinking_level, "isScoped": bool(scoped)}

    # --- session metadata ---

    def set_session_name(self, name: str) -> None:
        name = name.strip()
        if not name:
            raise CommandFailed("Session name cannot be empty")
        self.session.append("session_info", name=name)
        self.emit({"type": "session_info_changed", "name": name})
        self.rt.hooks.call("session_info_changed", event=SessionInfoChangedEvent("name", name=name))

    def set_label(self, entry_id: str, label: str | None) -> None:
        if self.session.get_entry(entry_id) is None:
            raise CommandFailed(f"Entry {entry_id} not found")
        fields: dict[str, Any] = {"targetId": entry_id}
        if label:
            fields["label"] = label
        self.session.append("label", **fields)
        changed = SessionInfoChangedEvent("label", entry_id=entry_id, label=label or None)
        self.rt.hooks.call("session_info_changed", event=changed)

    async def close(self, reason: str) -> None:
        """Stop the run and tell plugins this session is going away."""
        summaries.cancel(self)
        if self.is_streaming:
            await self.abort()
        await self.rt.hooks.acall("session_shutdown", event=SessionShutdownEvent(reason))


def _branch_settings(branch: list[dict[str, Any]]) -> tuple[tuple[Any, Any] | None, str | None]:
    """(provider, modelId) of the last model_change/assistant message and the last thinking
    level on the branch, scanning back from the leaf (same result as build_session_context)."""
    model: tuple[Any, Any] | None = None
    for entry in reversed(branch):  # an assistant message is near the leaf: a few steps
        kind = entry.get("type")
        if kind == "model_change":
            model = (entry.get("provider"), entry.get("modelId"))
            break
        message = entry.get("message")
        if kind == "message" and isinstance(message, dict) and message.get("role") == "assistant":
            model = (message.get("provider"), message.get("model"))
            break
    # the level is set once, near the root: found by C loops (``map``, ``list.index``) over the
    # types from the leaf back, not a Python step per entry of a long branch
    kinds = list(map(dict.get, reversed(branch), repeat("type")))
    found = -1
    with contextlib.suppress(ValueError):
        while True:
            found = kinds.index("thinking_level_change", found + 1)
            level = branch[-1 - found].get("thinkingLevel")
            if isinstance(level, str):
                return model, level
    return model, None


def open_session_ref(store: Any, ref: str) -> Session:
    """``--session``: a file path, or a session id in the current store."""
    import os

    if os.sep in ref or ref.endswith(".jsonl"):
        return store.open_path(os.path.abspath(os.path.expanduser(ref)))
    return store.open(ref)


def make_user_message(text: str, images: list[dict[str, Any]] | None) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for image in images or []:
        content.append({"type": "image", "data": image.get("data", ""), "mimeType": image.get("mimeType", "")})
    return {"role": "user", "content": content, "timestamp": now_ms()}


def _custom(message: dict[str, Any]) -> dict[str, Any]:
    out = {"role": "custom", "display": True, "timestamp": now_ms(), **message}
    out.setdefault("customType", "extension")
    out.setdefault("content", "")
    return out


def _replace_images(message: dict[str, Any], text: str) -> dict[str, Any]:
    content = message.get("content")
    if not isinstance(content, list) or not any(b.get("type") == "image" for b in content):
        return message
    blocks = [{"type": "text", "text": text} if b.get("type") == "image" else b for b in content]
    return {**message, "content": blocks}
