"""The active session: its entry tree, the context the model sees, its model state and what it records.

:class:`ActiveSession` is what every driver of a session works on (the runner, the prompter,
compaction, summaries, recovery): the :class:`~atomic_host.kit.sessions.tree.Session`, the
in-memory context (built lazily from the branch), the :class:`~atomic_host.engine.model_state.ModelState`,
the provider context and options of the next model call, and the session's own settings
(auto-retry, auto-compaction, a narrower tool set). It holds no other part, so the parts can hold it
without making a cycle.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from itertools import repeat
from typing import TYPE_CHECKING, Any

from atomic_host.contract.errors import HostError
from atomic_host.contract.events import ContextEvent, MessageEndEvent, SessionInfoChangedEvent, SessionStartEvent
from atomic_host.contract.providers import StreamOptions
from atomic_host.engine.emitter import Emitter
from atomic_host.engine.model_state import ModelState
from atomic_host.engine.provider_hooks import provider_hooks
from atomic_host.engine.system_prompt import build_system_prompt, load_context_files

if TYPE_CHECKING:
    from atomic_host.agent.ports import StreamFn
    from atomic_host.contract.tools import Tool
    from atomic_host.core.models.registry import ModelRegistry
    from atomic_host.core.options import Options
    from atomic_host.core.settings import Settings
    from atomic_host.engine.services import HostServices
    from atomic_host.kit.sessions.tree import Session
    from atomic_host.plugins.dispatch import Dispatcher


def now_ms() -> int:
    return int(time.time() * 1000)


class ActiveSession:
    """One open session and its context; ``emit`` sends its events."""

    def __init__(self, rt: HostServices, session: Session, emit: Emitter | None = None) -> None:
        self._rt = rt
        self.session = session
        self.cwd: str = getattr(session, "cwd", None) or rt.cwd
        self.emit = emit or Emitter(rt)
        self.state = ModelState(rt, session, self.emit)
        """The model and thinking level (engine/model_state.py)."""
        self._messages: list[dict[str, Any]] | None = []
        self._context_branch: list[dict[str, Any]] = []
        self.auto_retry = rt.settings.retry_enabled
        self.auto_compaction = rt.settings.compaction_enabled
        self.tool_names: set[str] | None = None
        """A narrower tool selection for this session only (workflow stages); None = the host's."""
        self._temp_dir: str | bool | None = False

    # --- the host's services the drivers use ---

    @property
    def hooks(self) -> Dispatcher:
        return self._rt.hooks

    @property
    def settings(self) -> Settings:
        return self._rt.settings

    @property
    def registry(self) -> ModelRegistry:
        """The model registry (catalog, keys, stream functions)."""
        return self._rt.models

    @property
    def options(self) -> Options:
        return self._rt.options

    # --- model state ---

    @property
    def model(self) -> dict[str, Any] | None:
        return self.state.model

    @model.setter
    def model(self, value: dict[str, Any] | None) -> None:
        self.state.model = value

    @property
    def thinking_level(self) -> str:
        return self.state.thinking_level

    @thinking_level.setter
    def thinking_level(self, value: str) -> None:
        self.state.thinking_level = value

    def require_model(self) -> dict[str, Any]:
        """The model a run can use, or the ``HostError`` that says why there is none."""
        return self.state.require()

    def announce_model(self, model: dict[str, Any], previous: dict[str, Any] | None, source: str) -> None:
        self.state.announce(model, previous, source)

    # --- the context ---

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
                found = self._rt.models.find(model[0], model[1])
                if found is not None:
                    self.state.model = found
            if level:
                self.state.thinking_level = level

    def record_message(self, message: dict[str, Any]) -> None:
        """Persist a finished message, then add it to the context: when the write fails (disk full,
        another process holds the session) it raises and the context stays what the file says."""
        if message.get("role") == "custom":
            fields = {k: v for k, v in message.items() if k in ("customType", "content", "display", "details")}
            self.session.append("custom_message", **fields)
        else:
            self.session.append_message(message)
        self.messages.append(message)

    def end_message(self, message: dict[str, Any]) -> dict[str, Any]:
        """``message_end`` hooks may replace a finished message (same role); returns the message."""
        hooks = self._rt.hooks
        if not hooks.has_impls("message_end"):
            return message
        event = MessageEndEvent(message)
        hooks.call("message_end", event=event)
        return event.message

    def append_custom_entry(self, custom_type: str, data: Any) -> dict[str, Any]:
        entry = self.session.append("custom", customType=custom_type, data=data)
        self.emit({"type": "entry_appended", "entry": entry})
        return entry

    # --- the next model call ---

    def model_tools(self) -> list[Tool]:
        """The tools the model sees in this session: the host's selection, narrowed by ``tool_names``."""
        tools = self._rt.tools.for_model()
        return tools if self.tool_names is None else [t for t in tools if t.name in self.tool_names]

    async def llm_context(self, system_prompt: str | None, signal: asyncio.Event | None = None) -> dict[str, Any]:
        """The provider context of the next model call; ``context`` hooks may edit its messages
        (``signal``: the run's abort signal, handed to them)."""
        from atomic_host.session.context import convert_to_llm

        rt, messages = self._rt, self.messages
        if rt.hooks.has_impls("context"):
            event = ContextEvent(list(messages), self.model, signal)
            await rt.hooks.acall("context", event=event)
            messages = event.messages
        messages = convert_to_llm(messages, repair_trailing=True)
        if rt.settings.bool("images.blockImages", False):
            messages = [_replace_images(m, "Image reading is disabled.") for m in messages]
        elif "image" not in (self.model or {}).get("input", ["text", "image"]):
            messages = [_replace_images(m, "(image omitted: this model does not accept images)") for m in messages]
        tools = self.model_tools()
        if not all(t.schema_built for t in tools):
            # The first request imports each tool's module and builds its pydantic schema: 0.1 s
            # and more on a busy machine, so in a thread, where the loop stays free for abort.
            await asyncio.to_thread(lambda: [t.json_schema() for t in tools])
        if not system_prompt:
            system_prompt = await self.system_prompt(tools)
        return {"systemPrompt": system_prompt, "messages": messages, "tools": [t.to_llm() for t in tools]}

    async def system_prompt(self, tools: list[Tool] | None = None) -> str:
        """The host's system prompt of the next model call (for ``tools``, default the model's)."""
        rt = self._rt
        # The context files are stat-ed each request (an edit shows on the next one) and read
        # only when changed, a big one in a thread: the loop never waits on their I/O.
        context = await load_context_files(rt.agent_dir, self.cwd, rt.trusted)
        tools = self.model_tools() if tools is None else tools
        return build_system_prompt(rt.options, rt.hooks, tools, self.cwd, context)

    def stream_options(self, signal: asyncio.Event | None = None) -> StreamOptions:
        """Neutral provider options from the session state and settings; ``signal`` aborts the call."""
        model = self.model or {}
        rt, settings, level = self._rt, self._rt.settings, self.thinking_level
        return StreamOptions(
            api_key=rt.models.resolve_api_key(model.get("provider", "")),
            reasoning=None if level == "off" or not model.get("reasoning") else level,
            thinking_budgets=settings.get("thinkingBudgets"),
            max_tokens=model.get("maxTokens"),
            signal=signal if signal is not None else asyncio.Event(),
            session_id=self.session.id,
            headers=rt.models.request_headers(model) if model else {},
            stream_deadline_s=settings.int("streamDeadlineMs", 300000) / 1000,
            max_line_bytes=max(0, settings.int("streamMaxLineBytes", 0)) or StreamOptions.max_line_bytes,
            max_retries=settings.int("retry.provider.maxRetries", 0),
            max_retry_delay_ms=settings.int("retry.provider.maxRetryDelayMs", 60000),
            http_client=rt.http_client() if model and rt.models.needs_http(model["api"]) else None,
            provider_hooks=provider_hooks(rt.hooks, model) if model else None,
        )

    def stream_fn(self, api: str) -> StreamFn | None:
        return self._rt.models.stream_fn(api)

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
        """The session's owner-only temp dir (created on first use), or None."""
        if self._temp_dir is False:
            from atomic_host.kit.tempdirs import session_temp_dir

            path = session_temp_dir(self.session.id)
            self._temp_dir = str(path) if path else None
        return self._temp_dir  # type: ignore[return-value]

    # --- session metadata ---

    async def fire_session_start(self, reason: str, previous: str | None = None) -> None:
        await self._rt.hooks.acall("session_start", event=SessionStartEvent(reason, previous))

    def set_session_name(self, name: str) -> None:
        name = name.strip()
        if not name:
            raise HostError("Session name cannot be empty")
        self.session.append("session_info", name=name)
        self.emit({"type": "session_info_changed", "name": name})
        self._rt.hooks.call("session_info_changed", event=SessionInfoChangedEvent("name", name=name))

    def set_label(self, entry_id: str, label: str | None) -> None:
        if self.session.get_entry(entry_id) is None:
            raise HostError(f"Entry {entry_id} not found")
        fields: dict[str, Any] = {"targetId": entry_id}
        if label:
            fields["label"] = label
        self.session.append("label", **fields)
        changed = SessionInfoChangedEvent("label", entry_id=entry_id, label=label or None)
        self._rt.hooks.call("session_info_changed", event=changed)


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


def _replace_images(message: dict[str, Any], text: str) -> dict[str, Any]:
    content = message.get("content")
    if not isinstance(content, list) or not any(b.get("type") == "image" for b in content):
        return message
    blocks = [{"type": "text", "text": text} if b.get("type") == "image" else b for b in content]
    return {**message, "content": blocks}
