"""AgentSession: one open session and the agent working in it — prompts, queues, abort, retry,
model and thinking selection, and the in-memory context the model sees."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import TYPE_CHECKING, Any

from atomic_host.agent.loop import make_stream_options, run_agent
from atomic_host.contract.errors import HostError as CommandFailed
from atomic_host.contract.events import (
    BeforeAgentStartEvent,
    InputEvent,
    SessionShutdownEvent,
    SessionStartEvent,
    SystemPromptEvent,
)
from atomic_host.contract.results import InputResult
from atomic_host.engine import summaries
from atomic_host.session.tree import message_text

if TYPE_CHECKING:
    from atomic_host.contract.providers import StreamOptions
    from atomic_host.runtime import Runtime
    from atomic_host.session.tree import Session

BUSY = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
DEFAULT_SYSTEM_PROMPT = """\
You are an expert coding assistant. You work in the user's project through the tools below.

Guidelines:
- Read a file before you change it; prefer small, exact edits over rewriting whole files.
- Use the search and find tools to locate code instead of guessing paths.
- Run commands (tests, linters, builds) to check your work, and report what you ran.
- Never run destructive commands (deleting data, force-pushing) unless the user asked for it.
- When something is unclear or risky, ask the user before acting.
- Answer concisely; show file paths so the user can follow your changes."""
CONTEXT_FILES = ("AGENTS.md", "CLAUDE.md")
MODEL_PREFERENCE = (
    ("anthropic", "claude-sonnet-4-6"),
    ("anthropic", "claude-sonnet-4-5"),
    ("openai", "gpt-5.2"),
    ("openai", "gpt-5"),
)


def now_ms() -> int:
    return int(time.time() * 1000)


class AgentSession:
    """The active session plus the agent's state; the RPC handlers call into it."""

    def __init__(self, rt: Runtime, session: Session) -> None:
        self.rt = rt
        self.session = session
        self.cwd: str = getattr(session, "cwd", None) or rt.cwd
        self.model: dict[str, Any] | None = None
        self.thinking_level = "off"
        self._messages: list[dict[str, Any]] | None = []
        self._context_branch: list[dict[str, Any]] = []
        self.steering: list[tuple[str, dict[str, Any]]] = []
        self.follow_up: list[tuple[str, dict[str, Any]]] = []
        self.paused = False
        self.steering_mode = rt.settings.steering_mode
        self.follow_up_mode = rt.settings.follow_up_mode
        self.auto_retry = rt.settings.retry_enabled
        self.auto_compaction = rt.settings.compaction_enabled
        self.abort_signal = asyncio.Event()
        self.drive_task: asyncio.Task[None] | None = None
        self.retry_attempt = 0
        self.retry_wait: asyncio.Task[None] | None = None
        self.deferred_bash: list[dict[str, Any]] = []
        self.stopped_by_abort = False
        self.recovery_report: dict[str, Any] | None = None
        self.summary_task: asyncio.Task[None] | None = None
        self._temp_dir: str | bool | None = False
        # compaction (atomic_host/engine/compaction.py): the running job, one overflow recovery per turn
        self.compaction_job: Any = None
        self.overflow_recovered = False

    # --- construction ---

    @classmethod
    async def open_initial(cls, rt: Runtime) -> AgentSession:
        """Startup: --session / --continue / --no-session / a new session, then model selection."""
        opts = rt.options
        store = rt.store
        session = None
        if opts.session:
            session = open_session_ref(store, opts.session)
        elif opts.continue_session:
            session = store.most_recent(rt.cwd)
        fresh = session is None
        if fresh:
            session = store.new_session(rt.cwd)
        agent = cls(rt, session)
        agent.rebuild_context(restore_model=not fresh)
        agent.select_startup_model(fresh)
        if opts.name:
            agent.set_session_name(opts.name)
        await agent.fire_session_start("startup")
        return agent

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The in-memory context. Built on first use from the branch captured by
        ``rebuild_context``: switching to a long session does not pay for it up front."""
        if self._messages is None:
            from atomic_host.session.context import build_session_context

            self._messages = list(build_session_context(self._context_branch).messages)
            self._context_branch = []
        return self._messages

    @messages.setter
    def messages(self, value: list[dict[str, Any]]) -> None:
        self._messages, self._context_branch = value, []

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
        from atomic_host.core.models.refs import parse_model_ref, resolve_model
        from atomic_host.core.models.thinking import LEVELS, clamp

        opts, settings, registry = self.rt.options, self.rt.settings, self.rt.models
        level: str | None = opts.thinking
        if opts.model:
            _p, _m, ref_level = parse_model_ref(opts.model)
            self.model = resolve_model(registry, opts.model, opts.provider)
            if self.model is None:
                print(f"atomic: model not found: {opts.model}", file=sys.stderr)
            level = level or ref_level
        elif opts.provider:
            self.model = next((m for m in registry.available() if m["provider"] == opts.provider), None)
        if self.model is None and fresh:
            dp, dm = settings.str("defaultProvider"), settings.str("defaultModel")
            if dp and dm:
                self.model = registry.find(dp, dm)
            if self.model is None:
                self.model = self._preferred_model()
        if fresh or level:
            self.thinking_level = level or settings.str("defaultThinkingLevel") or "medium"
        if self.thinking_level not in LEVELS:
            print(f"atomic: unknown thinking level {self.thinking_level!r}, using medium", file=sys.stderr)
            self.thinking_level = "medium"
        if self.model is not None:
            self.thinking_level = clamp(self.model, self.thinking_level)
        if fresh:
            self.record_initial_settings()
        elif not any(e.get("type") == "thinking_level_change" for e in self.session.branch()):
            self.session.append("thinking_level_change", thinkingLevel=self.thinking_level)

    def record_initial_settings(self) -> None:
        """A new session starts with ``model_change`` (when a model is set) and ``thinking_level_change``."""
        if self.model is not None:
            self.session.append("model_change", provider=self.model["provider"], modelId=self.model["id"])
        self.session.append("thinking_level_change", thinkingLevel=self.thinking_level)

    def _preferred_model(self) -> dict[str, Any] | None:
        available = self.rt.models.available()
        for provider, model_id in MODEL_PREFERENCE:
            for m in available:
                if m["provider"] == provider and m["id"] == model_id:
                    return m
        # The scripted faux provider is for tests and demos: only used when asked for by name.
        return next((m for m in available if m["provider"] != "faux"), None)

    async def fire_session_start(self, reason: str, previous: str | None = None) -> None:
        event = SessionStartEvent(reason, previous)
        await self.rt.plugins.acall_each("session_start", event=event, api=self.rt.api)

    # --- events and messages ---

    def emit(self, event: dict[str, Any], line: str | None = None) -> None:
        """Send an event to the client (``line``: its JSON, when already encoded) and to observers."""
        self.rt.out.send(event, line)
        if self.rt.plugins.has_impls("on_event"):
            for _ in self.rt.plugins.call_each("on_event", event=event, api=self.rt.api):
                pass

    def record_message(self, message: dict[str, Any]) -> None:
        """Add a finished message to the context and persist it."""
        self.messages.append(message)
        if message.get("role") == "custom":
            fields = {
                k: v for k, v in message.items() if k in ("customType", "content", "display", "details")
            }
            self.session.append("custom_message", **fields)
        else:
            self.session.append_message(message)

    def deliver_message(self, message: dict[str, Any]) -> None:
        """A user/custom message enters the run: events, dequeue, persistence."""
        self.emit({"type": "message_start", "message": message})
        if message.get("role") == "user":
            self._dequeue_text(message_text(message))
        self.emit({"type": "message_end", "message": message})
        self.record_message(message)

    def note_assistant(self, message: dict[str, Any]) -> None:
        if self.retry_attempt > 0 and message.get("stopReason") not in ("error", "aborted"):
            self.emit({"type": "auto_retry_end", "success": True, "attempt": self.retry_attempt})
            self.retry_attempt = 0

    # --- provider context ---

    def system_prompt(self) -> str:
        opts = self.rt.options
        base = opts.system_prompt or DEFAULT_SYSTEM_PROMPT
        tools = self.rt.tools.for_model()
        lines = [base, ""]
        if tools:
            lines.append("Available tools: " + ", ".join(t.name for t in tools) + ".")
            lines += [t.prompt_snippet for t in tools if t.prompt_snippet]
        if self.rt.plugins.has_impls("system_prompt"):
            event = SystemPromptEvent([t.name for t in tools])
            for _plugin, section in self.rt.plugins.call_each("system_prompt", event=event, api=self.rt.api):
                if isinstance(section, str) and section.strip():
                    lines += ["", section.strip()]
        lines.append(f"Current date: {time.strftime('%Y-%m-%d')}")
        lines.append(f"Current working directory: {self.cwd}")
        if opts.append_system_prompt:
            lines += ["", opts.append_system_prompt]
        for path, text in self.context_files():
            lines += ["", f"# Project context from {path}", "", text.strip()]
        return "\n".join(lines)

    def context_files(self) -> list[tuple[str, str]]:
        """AGENTS.md (or CLAUDE.md) from the agent dir, then from each dir from the root down to cwd."""
        from pathlib import Path

        dirs = [self.rt.agent_dir, *reversed([Path(self.cwd), *Path(self.cwd).parents])]
        found = []
        for directory in dirs:
            for name in CONTEXT_FILES:
                path = directory / name
                try:
                    found.append((str(path), path.read_text(encoding="utf-8", errors="replace")))
                    break
                except OSError:
                    continue
        return found

    def llm_context(self, system_prompt: str | None) -> dict[str, Any]:
        from atomic_host.session.context import convert_to_llm

        messages = convert_to_llm(self.messages, repair_trailing=True)
        if self.rt.settings.bool("images.blockImages", False):
            messages = [_replace_images(m, "Image reading is disabled.") for m in messages]
        elif "image" not in (self.model or {}).get("input", ["text", "image"]):
            messages = [
                _replace_images(m, "(image omitted: this model does not accept images)") for m in messages
            ]
        return {
            "systemPrompt": system_prompt or self.system_prompt(),
            "messages": messages,
            "tools": [t.to_llm() for t in self.rt.tools.for_model()],
        }

    def stream_options(self) -> StreamOptions:
        return make_stream_options(self)

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
        self, text: str, images: list[dict[str, Any]] | None, behavior: str | None, source: str = "rpc"
    ) -> str:
        """The prompt pipeline of semantics §3.1; returns the disposition."""
        if text.startswith("/"):
            name, _, args = text[1:].partition(" ")
            command = self.rt.commands.get(name)
            if command is not None and not command.is_expansion:
                await self.run_command(command, args)
                return "handled"
        summaries.cancel(self)
        if self.paused:
            self._enqueue("followUp" if behavior == "followUp" else "steer", text, images)
            return "queued"
        result = await self.apply_input_hooks(text, images, "prompt", source)
        if result is None:
            return "handled"
        text, images = result
        text = self.expand_command(text)
        if self.is_streaming:
            if behavior not in ("steer", "followUp"):
                raise CommandFailed(BUSY)
            self._enqueue(behavior, text, images)
            return "queued"
        self.flush_deferred_bash()
        self.require_model()
        await _compaction().before_prompt(self)  # compaction: threshold check before a new prompt
        self.stopped_by_abort = False
        messages = [make_user_message(text, images)]
        system_prompt = None
        for _plugin, res in await self.rt.plugins.acall_each(
            "before_agent_start",
            event=BeforeAgentStartEvent(text, images),
            api=self.rt.api,
        ):
            if isinstance(res, dict):
                system_prompt = res.get("system_prompt") or res.get("systemPrompt") or system_prompt
                messages += [_custom(m) for m in res.get("messages", [])]
        self.start_drive(messages, system_prompt)
        return "started"

    async def queue_message(self, kind: str, text: str, images: list[dict[str, Any]] | None) -> str:
        """``steer`` / ``follow_up``: never extension commands; queued (or handled by an input hook)."""
        if text.startswith("/"):
            name = text[1:].partition(" ")[0]
            command = self.rt.commands.get(name)
            if command is not None and not command.is_expansion:
                raise CommandFailed(
                    f'Extension command "/{name}" cannot be queued. Use prompt() or execute the command '
                    "when not streaming."
                )
        result = await self.apply_input_hooks(
            text, images, "steer" if kind == "steer" else "follow_up", "rpc"
        )
        if result is None:
            return "handled"
        text, images = result
        text = self.expand_command(text)
        self._enqueue(kind, text, images)
        if not self.is_streaming and self.messages and not self.stopped_by_abort and not self.paused:
            self.start_drive(self.next_queued(), None)
        return "queued"

    async def apply_input_hooks(
        self, text: str, images: list[dict[str, Any]] | None, kind: str, source: str
    ) -> tuple[str, list[dict[str, Any]] | None] | None:
        """Chain ``input`` hooks: None when one handled the input, else the (transformed) text/images."""
        if not self.rt.plugins.has_impls("input"):
            return text, images
        event = InputEvent(text, images, source, kind)
        for _plugin, res in await self.rt.plugins.acall_each("input", event=event, api=self.rt.api):
            if isinstance(res, InputResult):
                if res.action == "handled":
                    return None
                event.text = res.text if res.text is not None else event.text
                event.images = res.images if res.images is not None else event.images
        return event.text, event.images

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
            print(f"atomic: command /{command.name} failed: {exc}", file=sys.stderr)
            self.rt.extension_error(f"command:{command.name}", "command", str(exc) or type(exc).__name__)

    async def submit_extension_prompt(self, text: str, deliver_as: str | None) -> None:
        behavior = {"steer": "steer", "followUp": "followUp"}.get(deliver_as or "")
        if self.is_streaming:
            self._enqueue(behavior or "followUp", text, None)
        else:
            await self.prompt(text, None, behavior, source="extension")

    async def send_custom_message(
        self,
        custom_type: str,
        content: Any,
        *,
        display: bool,
        details: Any,
        trigger_turn: bool,
        deliver_as: str | None,
        exclude_from_context: bool,
    ) -> None:
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
        if self.is_streaming:
            self._enqueue_message("followUp" if deliver_as == "followUp" else "steer", message)
        elif trigger_turn:
            self.require_model()
            self.start_drive([message], None)
        else:
            self.deliver_message(message)

    def append_custom_entry(self, custom_type: str, data: Any) -> dict[str, Any]:
        entry = self.session.append("custom", customType=custom_type, data=data)
        self.emit({"type": "entry_appended", "entry": entry})
        return entry

    # --- the run driver: runs, auto-retry, queued continuations ---

    def start_drive(self, messages: list[dict[str, Any]], system_prompt: str | None) -> None:
        if self.rt.pending_reload:
            self.rt.apply_pending_reloads()
        self.abort_signal = asyncio.Event()
        self.overflow_recovered = False  # compaction: a new turn may recover from overflow once
        self.drive_task = asyncio.create_task(self._drive(messages, system_prompt))

    async def _drive(self, messages: list[dict[str, Any]], system_prompt: str | None) -> None:
        try:
            while True:
                await run_agent(self, messages, system_prompt)
                messages = []
                if self.abort_signal.is_set():
                    break
                if await _compaction().after_run(self):  # compaction: overflow compacted, continue
                    continue
                last = next((m for m in reversed(self.messages) if m.get("role") == "assistant"), None)
                if last is not None and last.get("stopReason") == "error" and await self._maybe_retry(last):
                    continue
                if self.abort_signal.is_set():  # abort during the retry delay: abort() resumes the queue
                    break
                if self.rt.pending_reload:
                    self.rt.apply_pending_reloads()
                messages = self.next_queued()
                if not messages:
                    break
        except Exception as exc:  # a bug in the loop must not kill the host
            print(f"atomic: agent run failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            self.emit({"type": "agent_end", "messages": []})
        finally:
            self.emit({"type": "agent_settled"})
            if not self.abort_signal.is_set():
                summaries.schedule(self)

    async def _maybe_retry(self, failed: dict[str, Any]) -> bool:
        from atomic_host.kit.llm.errors import is_context_overflow, is_retryable_error

        window = (self.model or {}).get("contextWindow", 0)
        retryable = is_retryable_error(failed) and not is_context_overflow(failed, window)
        settings = self.rt.settings
        if retryable and self.auto_retry and self.retry_attempt < settings.retry_max:
            self.retry_attempt += 1
            delay = settings.retry_base_delay_ms * 2 ** (self.retry_attempt - 1)
            self.emit(
                {
                    "type": "auto_retry_start",
                    "attempt": self.retry_attempt,
                    "maxAttempts": settings.retry_max,
                    "delayMs": delay,
                    "errorMessage": failed.get("errorMessage", ""),
                }
            )
            if failed in self.messages:
                self.messages.remove(failed)
            self.retry_wait = asyncio.create_task(asyncio.sleep(delay / 1000))
            try:
                await self.retry_wait
            except asyncio.CancelledError:
                if asyncio.current_task().cancelling():  # type: ignore[union-attr]
                    raise
                self.emit(
                    {
                        "type": "auto_retry_end",
                        "success": False,
                        "attempt": self.retry_attempt,
                        "finalError": "Retry cancelled",
                    }
                )
                self.retry_attempt = 0
                return False
            finally:
                self.retry_wait = None
            return True
        if self.retry_attempt > 0:
            self.emit(
                {
                    "type": "auto_retry_end",
                    "success": False,
                    "attempt": self.retry_attempt,
                    "finalError": failed.get("errorMessage", ""),
                }
            )
            self.retry_attempt = 0
        return False

    def abort_retry(self) -> None:
        if self.retry_wait is not None:
            self.retry_wait.cancel()

    async def abort(self, continue_queued: bool = True) -> None:
        """Cancel the retry delay, the stream and running tools; wait until idle; keep the queues."""
        self.abort_signal.set()
        self.abort_retry()
        _compaction().cancel_automatic(self)  # compaction: a threshold/overflow run inside this run
        task = self.drive_task
        if task is None or task.done():
            return  # nothing running: a no-op
        self.stopped_by_abort = True
        await asyncio.shield(task)
        # Queued messages survive an abort and are delivered afterwards (clear_queue first to drop them).
        if continue_queued and (self.steering or self.follow_up) and not self.paused and self.model:
            self.start_drive(self.next_queued(), None)

    async def wait_idle(self) -> None:
        while self.drive_task is not None and not self.drive_task.done():
            await asyncio.shield(self.drive_task)

    # --- queues ---

    def _enqueue(self, kind: str, text: str, images: list[dict[str, Any]] | None) -> None:
        self._enqueue_message(kind, make_user_message(text, images))

    def _enqueue_message(self, kind: str, message: dict[str, Any]) -> None:
        queue = self.steering if kind == "steer" else self.follow_up
        queue.append((message_text(message), message))
        self.emit_queue()

    def emit_queue(self) -> None:
        self.emit(
            {
                "type": "queue_update",
                "steering": [t for t, _ in self.steering],
                "followUp": [t for t, _ in self.follow_up],
            }
        )

    def _dequeue_text(self, text: str) -> None:
        for queue in (self.steering, self.follow_up):
            for i, (queued, _m) in enumerate(queue):
                if queued == text:
                    del queue[i]
                    self.emit_queue()
                    return

    def _poll(self, queue: list[tuple[str, dict[str, Any]]], mode: str) -> list[dict[str, Any]]:
        if self.paused or not queue:
            return []
        items = queue if mode == "all" else queue[:1]
        # Texts stay listed until their message_start is processed (then _dequeue_text removes them).
        return [m for _t, m in items]

    def poll_steering(self) -> list[dict[str, Any]]:
        return self._poll(self.steering, self.steering_mode)

    def poll_follow_up(self) -> list[dict[str, Any]]:
        return self._poll(self.follow_up, self.follow_up_mode)

    def next_queued(self) -> list[dict[str, Any]]:
        """What a new turn delivers from the queue: steering first, else follow-ups."""
        return self.poll_steering() or self.poll_follow_up()


    def clear_queue(self) -> dict[str, list[str]]:
        data = {"steering": [t for t, _ in self.steering], "followUp": [t for t, _ in self.follow_up]}
        self.steering.clear()
        self.follow_up.clear()
        self.emit_queue()
        return data

    def resume_queue(self) -> bool:
        released = self.paused
        self.paused = False
        return released

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

    def set_model(
        self, provider: str, model_id: str, persist: bool = False, source: str = "set"
    ) -> dict[str, Any]:
        from atomic_host.core.models.thinking import clamp

        model = next(
            (m for m in self.rt.models.available() if m["provider"] == provider and m["id"] == model_id), None
        )
        if model is None:
            raise CommandFailed(f"Model not found: {provider}/{model_id}")
        previous = self.model
        self.model = model
        self.session.append("model_change", provider=provider, modelId=model_id)
        level = clamp(model, self.thinking_level)
        if level != self.thinking_level:
            self._set_level(level)
        self.emit({"type": "model_changed", "model": model, "previousModel": previous, "source": source})
        if persist:
            self.rt.settings.save_global("defaultProvider", provider)
            self.rt.settings.save_global("defaultModel", model_id)
            self.rt.settings.save_global("defaultThinkingLevel", self.thinking_level)
        return model

    def _set_level(self, level: str) -> None:
        self.thinking_level = level
        self.session.append("thinking_level_change", thinkingLevel=level)
        self.emit({"type": "thinking_level_changed", "level": level})

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
        patterns = self.rt.options.models or self.rt.settings.list("enabledModels", []) or []
        if not patterns:
            return []
        import fnmatch

        out = []
        for m in self.rt.models.available():
            full = f"{m['provider']}/{m['id']}"
            if any(fnmatch.fnmatch(full, p) or fnmatch.fnmatch(m["id"], p) for p in patterns):
                out.append(m)
        return out

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

    def set_label(self, entry_id: str, label: str | None) -> None:
        if self.session.get_entry(entry_id) is None:
            raise CommandFailed(f"Entry {entry_id} not found")
        fields: dict[str, Any] = {"targetId": entry_id}
        if label:
            fields["label"] = label
        self.session.append("label", **fields)

    async def close(self, reason: str) -> None:
        """Stop the run and tell plugins this session is going away."""
        summaries.cancel(self)
        if self.is_streaming:
            await self.abort(continue_queued=False)
        event = SessionShutdownEvent(reason)
        await self.rt.plugins.acall_each("session_shutdown", event=event, api=self.rt.api)


def _compaction() -> Any:
    from atomic_host.engine import compaction

    return compaction


def _branch_settings(branch: list[dict[str, Any]]) -> tuple[tuple[Any, Any] | None, str | None]:
    """(provider, modelId) of the last model_change/assistant message and the last thinking
    level on the branch, scanning back from the leaf (same result as build_session_context)."""
    model: tuple[Any, Any] | None = None
    level: str | None = None
    for entry in reversed(branch):
        kind = entry.get("type")
        if model is None:
            if kind == "model_change":
                model = (entry.get("provider"), entry.get("modelId"))
            elif kind == "message":
                message = entry.get("message")
                if isinstance(message, dict) and message.get("role") == "assistant":
                    model = (message.get("provider"), message.get("model"))
        if level is None and kind == "thinking_level_change" and isinstance(entry.get("thinkingLevel"), str):
            level = entry["thinkingLevel"]
        if model is not None and level is not None:
            break
    return model, level


def open_session_ref(store: Any, ref: str) -> Session:
    """``--session``: a file path, or a session id in the current store."""
    import os

    if os.sep in ref or ref.endswith(".jsonl"):
        return store.open_path(os.path.abspath(os.path.expanduser(ref)))
    return store.open(ref)


def make_user_message(text: str, images: list[dict[str, Any]] | None) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for image in images or []:
        content.append(
            {"type": "image", "data": image.get("data", ""), "mimeType": image.get("mimeType", "")}
        )
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
