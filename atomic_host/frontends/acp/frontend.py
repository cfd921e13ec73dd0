"""The ACP agent side over the host engine: the SDK calls these methods, they drive the runtime's
active :class:`AgentSession` the way the RPC handlers do, and the engine's events come back as
``session/update`` notifications.

One engine session is active at a time (the runtime has one): ``session/new`` and
``session/load`` switch to theirs, a prompt for another known session switches back to it when
nothing is running, and is refused while another session's run is still going.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from acp import PROTOCOL_VERSION, RequestError
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionInfo,
    SessionInfoUpdate,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallUpdate,
    UnstructuredCommandInput,
)

from atomic_host import __version__
from atomic_host.contract.errors import HostError
from atomic_host.contract.tools import Approval, ApprovalAnswer
from atomic_host.core.jsonfast import RawJSON, dumps_spliced
from atomic_host.core.models.thinking import supported_levels
from atomic_host.engine import navigation
from atomic_host.frontends.acp import translate
from atomic_host.frontends.rpc.handlers import Handlers
from atomic_host.frontends.rpc.server import NO_DATA, NO_RESPONSE
from atomic_host.kit.log import log
from atomic_host.kit.permission_modes import ACP_MODES, ACP_OF
from atomic_host.kit.sessions.errors import SessionNotFound

if TYPE_CHECKING:
    from atomic_host.engine.agent_session import AgentSession
    from atomic_host.frontends.acp.transport import HostTransport
    from atomic_host.kit.sessions.tree import Session
    from atomic_host.runtime import Runtime

EXTENSIONS = {
    "methods": ["_atomic/command", "_atomic/subscribe"],
    "notifications": ["_atomic/event", "_atomic/ui"],
}
"""The Atomic-only extension methods, advertised in the agent capabilities' ``_meta.atomic``."""
PAGE_SIZE = 100


def _failure(message: str) -> RequestError:
    return RequestError(-32603, message)


@dataclass
class Turn:
    """One ``session/prompt``: whether it was cancelled and the last assistant message it produced."""

    cancelled: bool = False
    last_assistant: dict[str, Any] | None = None


@dataclass
class AcpSession:
    """What the frontend keeps per ACP session: the engine's session and the client-side policy."""

    id: str
    cwd: str
    session: Session
    todos: dict[str, dict[str, Any]] = field(default_factory=dict)
    turn: Turn | None = None


@dataclass
class Call:
    name: str
    synthetic: bool = False
    diff: Any = None


class UpdateStream:
    """Notifications to the client, in the order the engine produced them, sent by one task."""

    def __init__(self) -> None:
        self.conn: Any = None
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread = 0

    def start(self, conn: Any) -> None:
        self.conn = conn
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()
        self.task = asyncio.create_task(self._pump())

    def update(self, session_id: str, update: Any) -> None:
        self._put(("update", session_id, update))

    def ext(self, method: str, params: dict[str, Any]) -> None:
        self._put(("ext", method, params))

    def _put(self, item: Any) -> None:
        if self.loop is not None and threading.get_ident() != self.thread:  # a plugin's worker thread emitted
            self.loop.call_soon_threadsafe(self.queue.put_nowait, item)
        else:
            self.queue.put_nowait(item)

    async def flush(self) -> None:
        """Return once everything queued so far has been written."""
        if self.task is None or self.task.done():
            return
        done = asyncio.get_running_loop().create_future()
        self.queue.put_nowait(done)
        await asyncio.shield(done)

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()

    async def _pump(self) -> None:
        while True:
            item = await self.queue.get()
            if isinstance(item, asyncio.Future):
                if not item.done():
                    item.set_result(None)
                continue
            kind, key, payload = item
            try:
                if kind == "update":
                    await self.conn.session_update(session_id=key, update=payload)
                else:
                    await self.conn.ext_notification(key, payload)
            except ConnectionError:
                continue  # the client went away: the host shuts down when stdin closes
            except Exception as exc:
                log.warning(f"could not send an ACP notification: {type(exc).__name__}: {exc}")


class AcpFrontend:
    """Implements the SDK's ``Agent`` interface over one :class:`Runtime`."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.commands = Handlers(rt).table()
        """The RPC command table, for ``_atomic/command``."""
        self.conn: Any = None
        self.transport: HostTransport | None = None
        self.updates = UpdateStream()
        self.sessions: dict[str, AcpSession] = {}
        self.calls: dict[str, Call] = {}
        self.asking: set[asyncio.Task[Any]] = set()
        self.subscribed = False
        self.client_capabilities: Any = None

    # --- wiring ---

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    def install(self) -> None:
        """After ``rt.start()``: asking the user for a permission (the approvals plugin, through
        :meth:`request_approval`) is waiting on the user, so the hook time bound does not cut it short."""
        rt = self.rt
        rt.plugins.waiting_on_user = lambda: bool(self.asking) or bool(rt.ui.pending)
        self.updates.start(self.conn)

    def _active(self) -> AcpSession | None:
        agent = self.rt.session
        return None if agent is None else self.sessions.get(agent.session.id)

    def _state(self, session_id: str) -> AcpSession:
        state = self.sessions.get(session_id)
        if state is None:
            raise RequestError.invalid_params({"message": f"Unknown session: {session_id}"})
        return state

    async def _switch_to(self, state: AcpSession) -> AgentSession:
        """Make ``state``'s engine session the active one (when it is not already)."""
        agent = self.rt.require_session()
        if agent.session.id == state.id:
            return agent
        self._refuse_while_running()
        await navigation.activate(self.rt, state.session, "resume", fresh=False, cwd=state.cwd)
        return self.rt.require_session()

    def _refuse_while_running(self) -> None:
        agent = self.rt.session
        if agent is not None and agent.is_streaming:
            raise _failure("Another session is still running; cancel it first")

    # --- events → updates ---

    def on_event(self, event: dict[str, Any]) -> None:
        """``Output`` listener: every engine event, as it is emitted."""
        if self.subscribed:
            self.updates.ext("atomic/event", event)
        state = self._active()
        if state is None:
            return
        kind = event.get("type")
        send = self.updates.update
        sid = state.id
        if kind == "message_update":
            delta = event.get("assistantMessageEvent") or {}
            text = delta.get("delta")
            if not isinstance(text, str) or not text:
                return
            if delta.get("type") == "text_delta":
                send(sid, AgentMessageChunk(session_update="agent_message_chunk", content=_text(text)))
            elif delta.get("type") == "thinking_delta":
                send(sid, AgentThoughtChunk(session_update="agent_thought_chunk", content=_text(text)))
        elif kind == "message_end":
            message = event.get("message") or {}
            if message.get("role") == "assistant" and state.turn is not None:
                state.turn.last_assistant = message
            elif message.get("role") == "custom" and message.get("display"):
                body = _message_text(message)
                if body:
                    send(sid, AgentMessageChunk(session_update="agent_message_chunk", content=_text(body)))
        elif kind == "tool_execution_start":
            self._tool_start(state, event)
        elif kind == "tool_execution_update":
            call_id = str(event.get("toolCallId"))
            partial = event.get("partialResult") or {}
            call = self.calls.get(call_id)
            content = ([call.diff] if call is not None and call.diff is not None else []) + translate.result_content(
                partial
            )
            if content:
                send(sid, ToolCallProgress(session_update="tool_call_update", tool_call_id=call_id, content=content))
        elif kind == "tool_execution_end":
            self._tool_end(state, event)
        elif kind == "session_info_changed" and isinstance(event.get("name"), str):
            send(sid, SessionInfoUpdate(session_update="session_info_update", title=event["name"]))
        elif kind in ("model_changed", "thinking_level_changed"):
            send(sid, ConfigOptionUpdate(session_update="config_option_update", config_options=self._config(state)))

    def _approvals(self) -> Any:
        """The approvals plugin's service (the one place tool calls are allowed, asked about or
        refused; docs/permissions.md), or None when it is disabled: then every tool runs."""
        return self.rt.services.get("approvals")

    def _mode(self, state: AcpSession) -> str:
        """The session's ACP mode id, read from the approvals plugin."""
        approvals = self._approvals()
        return ACP_OF.get(approvals.mode(state.id), "default") if approvals is not None else "allow_all"

    def _tool_start(self, state: AcpSession, event: dict[str, Any]) -> None:
        call_id, name = str(event.get("toolCallId")), str(event.get("toolName"))
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        tool = self.rt.tools.get(name)
        approvals = self._approvals()
        cwd = self.rt.require_session().cwd
        verdict = "allow" if approvals is None else approvals.preview(name, args, state.id, cwd)
        status = "in_progress" if verdict == "allow" else "pending"
        label = getattr(tool, "label", None)
        start, diff = translate.start_update(call_id, name, args, cwd, label=label, status=status)
        self.calls[call_id] = Call(name, diff=diff)
        self.updates.update(state.id, start)

    def _tool_end(self, state: AcpSession, event: dict[str, Any]) -> None:
        call_id = str(event.get("toolCallId"))
        call = self.calls.pop(call_id, None)
        result = event.get("result") or {}
        failed = bool(event.get("isError"))
        content = translate.result_content(result)
        if call is not None and call.diff is not None and not failed:
            content = [call.diff, *content]
        update = ToolCallProgress(
            session_update="tool_call_update",
            tool_call_id=call_id,
            status="failed" if failed else "completed",
            content=content,
        )
        self.updates.update(state.id, update)
        if (
            event.get("toolName") == "todo"
            and not failed
            and translate.update_todos(state.todos, result.get("details"))
        ):
            self.updates.update(
                state.id, AgentPlanUpdate(session_update="plan", entries=translate.plan_entries(state.todos))
            )

    def agent_text(self, text: str) -> None:
        """Agent text in the active ACP session (extension notices, command output)."""
        state = self._active()
        if state is not None and text:
            self.updates.update(state.id, AgentMessageChunk(session_update="agent_message_chunk", content=_text(text)))

    def ext_event(self, method: str, params: dict[str, Any]) -> None:
        if self.subscribed:
            self.updates.ext(method, params)

    # --- permissions ---

    async def request_approval(self, approval: Approval, timeout: float | None) -> ApprovalAnswer:
        """Ask the client whether a tool call may run (``session/request_permission``): the
        approvals plugin decided to ask (``AcpUI.approve``)."""
        state = self._active()
        if state is None:
            return ApprovalAnswer("deny", why="no ACP session is active", unasked=True)
        name, call_id, cwd = approval.tool_name, approval.tool_call_id, approval.cwd
        call = self.calls.get(call_id)
        if call is None:  # a nested call (codemode): the client has not seen it yet
            start, diff = translate.start_update(call_id, name, approval.args, cwd, label=None, status="pending")
            call = self.calls[call_id] = Call(name, synthetic=True, diff=diff)
            self.updates.update(state.id, start)
        else:
            call.diff = translate.proposed_diff(name, approval.args, cwd)  # input may have been rewritten
        await self.updates.flush()  # the client knows the tool call before it is asked about it
        request = ToolCallUpdate(
            tool_call_id=call_id,
            title=translate.tool_title(name, approval.args),
            kind=translate.tool_kind(name),
            status="pending",
            content=[call.diff] if call.diff is not None else None,
            locations=translate.tool_locations(name, approval.args, cwd) or None,
            raw_input=approval.args,
        )
        always = f"Always allow {approval.scope or name} (this session)"
        options = [
            PermissionOption(option_id="allow_once", name="Allow", kind="allow_once"),
            PermissionOption(option_id="allow_always", name=always, kind="allow_always"),
            PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
        ]
        ask = asyncio.ensure_future(
            self.conn.request_permission(session_id=state.id, tool_call=request, options=options)
        )
        self.asking.add(ask)
        try:
            await asyncio.wait({ask}, timeout=timeout)
        finally:
            self.asking.discard(ask)
            timed_out = not ask.done()
            if timed_out:
                ask.cancel()
        answer = _answer(ask, timeout if timed_out else None)
        if answer.choice != "deny":
            status = "completed" if call.synthetic else "in_progress"
            self.updates.update(
                state.id, ToolCallProgress(session_update="tool_call_update", tool_call_id=call_id, status=status)
            )
        elif call.synthetic:
            self.calls.pop(call_id, None)
            self.updates.update(
                state.id, ToolCallProgress(session_update="tool_call_update", tool_call_id=call_id, status="failed")
            )
        return answer

    # --- lifecycle: initialize, sessions ---

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None, **_: Any
    ) -> InitializeResponse:
        self.client_capabilities = client_capabilities
        capabilities = AgentCapabilities(
            load_session=True,
            prompt_capabilities=PromptCapabilities(image=True, audio=False, embedded_context=True),
            mcp_capabilities=McpCapabilities(http=False, sse=False),
            session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            field_meta={"atomic": {"version": __version__, **EXTENSIONS, "modes": list(ACP_MODES)}},
        )
        return InitializeResponse(
            # The client's version when we speak it, else ours (the client then decides).
            protocol_version=protocol_version if protocol_version == PROTOCOL_VERSION else PROTOCOL_VERSION,
            agent_capabilities=capabilities,
            agent_info=Implementation(name="atomic-host", title="Atomic", version=__version__),
            auth_methods=[],
        )

    def _mcp_note(self, servers: list[Any] | None) -> dict[str, Any] | None:
        if not servers:
            return None
        names = [str(getattr(s, "name", "?")) for s in servers]
        installed = any(
            r.status == "loaded" and r.name.rsplit(".", 1)[-1] == "mcp" for r in self.rt.plugins.records.values()
        )
        why = "the mcp plugin does not take servers from ACP clients yet" if installed else "no MCP plugin is installed"
        note = f"ignored {len(names)} MCP server(s) from the client ({', '.join(names)}): {why}"
        log.warning(f"{note}")
        return {"atomic": {"mcpServersIgnored": names, "note": note}}

    async def new_session(
        self, cwd: str, additional_directories: list[str] | None = None, mcp_servers: list[Any] | None = None, **_: Any
    ) -> NewSessionResponse:
        self._refuse_while_running()
        if not await navigation.new_session(self.rt, cwd=cwd):
            raise _failure("A plugin cancelled the new session")
        session = self.rt.require_session().session
        state = self.sessions[session.id] = AcpSession(session.id, cwd, session)
        if self.transport is not None:  # commands once the client knows the session id
            self.transport.after_sent(
                lambda m: isinstance(m.get("result"), dict) and m["result"].get("sessionId") == state.id,
                lambda: self._announce_commands(state),
            )
        return NewSessionResponse(
            session_id=session.id,
            modes=self._modes(state),
            config_options=self._config(state),
            field_meta=self._mcp_note(mcp_servers),
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **_: Any,
    ) -> LoadSessionResponse:
        self._refuse_while_running()
        known = self.sessions.get(session_id)
        session = known.session if known is not None else await self._open(session_id, cwd)
        if not await navigation.switch_session(self.rt, session, cwd=cwd):
            raise _failure("A plugin cancelled loading the session")
        state = known or AcpSession(session.id, cwd, session)
        state.cwd = cwd
        self.sessions[session_id] = state
        for update in translate.replay(session.branch(), cwd):
            self.updates.update(session_id, update)
        self._announce_commands(state)
        await self.updates.flush()  # the history arrives before the response (ACP session/load)
        return LoadSessionResponse(
            modes=self._modes(state), config_options=self._config(state), field_meta=self._mcp_note(mcp_servers)
        )

    async def _open(self, session_id: str, cwd: str) -> Session:
        store = self.rt.store
        try:
            return await asyncio.to_thread(store.open, session_id)
        except SessionNotFound:
            dir_for = getattr(store, "dir_for", None)  # a session of another project directory
            if dir_for is None or cwd == self.rt.cwd:
                raise RequestError.resource_not_found(session_id) from None
            try:
                return await asyncio.to_thread(store.open, session_id, dir_for(cwd))
            except SessionNotFound:
                raise RequestError.resource_not_found(session_id) from None
        except (ValueError, OSError) as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from None

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **_: Any) -> ListSessionsResponse:
        infos = await asyncio.to_thread(self.rt.store.list, cwd or self.rt.cwd)
        start = int(cursor) if cursor and cursor.isdigit() else 0
        page = infos[start : start + PAGE_SIZE]
        sessions = [
            SessionInfo(
                session_id=str(info["id"]),
                cwd=str(info.get("cwd") or cwd or self.rt.cwd),
                title=info.get("name") or _title(info.get("firstMessage")),
                updated_at=info.get("modified"),
            )
            for info in page
        ]
        more = start + PAGE_SIZE < len(infos)
        return ListSessionsResponse(sessions=sessions, next_cursor=str(start + PAGE_SIZE) if more else None)

    def _announce_commands(self, state: AcpSession) -> None:
        commands = []
        for c in self.rt.commands.all():
            hint = "arguments" if c.source == "extension" else f"{c.source} arguments"
            commands.append(
                AvailableCommand(
                    name=c.name,
                    description=c.description or f"{c.source} command",
                    input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)),
                )
            )
        self.updates.update(
            state.id, AvailableCommandsUpdate(session_update="available_commands_update", available_commands=commands)
        )

    # --- modes and config options ---

    def _modes(self, state: AcpSession) -> SessionModeState:
        return SessionModeState(
            current_mode_id=self._mode(state),
            available_modes=[SessionMode(id=k, name=n, description=d) for k, (_m, n, d) in ACP_MODES.items()],
        )

    def _config(self, state: AcpSession) -> list[SessionConfigOptionSelect]:
        options = [
            SessionConfigOptionSelect(
                type="select",
                id="mode",
                name="Mode",
                category="mode",
                current_value=self._mode(state),
                options=[
                    SessionConfigSelectOption(value=k, name=n, description=d) for k, (_m, n, d) in ACP_MODES.items()
                ],
            )
        ]
        agent = self.rt.session
        if agent is None or agent.session.id != state.id:
            return options
        models = self.rt.models.available()
        current = f"{agent.model['provider']}/{agent.model['id']}" if agent.model else ""
        choices = [
            SessionConfigSelectOption(
                value=f"{m['provider']}/{m['id']}", name=str(m.get("name") or m["id"]), description=m["provider"]
            )
            for m in models
        ]
        if current not in {c.value for c in choices}:
            choices.insert(0, SessionConfigSelectOption(value=current, name=current or "(no model)"))
        options.append(
            SessionConfigOptionSelect(
                type="select", id="model", name="Model", category="model", current_value=current, options=choices
            )
        )
        levels = supported_levels(agent.model) if agent.model else ["off"]
        if agent.thinking_level not in levels:
            levels = [agent.thinking_level, *levels]
        options.append(
            SessionConfigOptionSelect(
                type="select",
                id="thought_level",
                name="Thinking",
                category="thought_level",
                current_value=agent.thinking_level,
                options=[SessionConfigSelectOption(value=v, name=v) for v in levels],
            )
        )
        return options

    def _set_mode(self, state: AcpSession, mode_id: str) -> None:
        if mode_id not in ACP_MODES:
            raise RequestError.invalid_params({"message": f"Unknown mode: {mode_id}"})
        approvals = self._approvals()
        if approvals is None:
            raise _failure("The approvals plugin is disabled: every tool runs without asking")
        approvals.set_mode(state.id, mode_id)

    async def set_session_mode(self, mode_id: str, session_id: str, **_: Any) -> SetSessionModeResponse:
        state = self._state(session_id)
        self._set_mode(state, mode_id)
        self.updates.update(
            session_id, CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode_id)
        )
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **_: Any
    ) -> SetSessionConfigOptionResponse:
        state = self._state(session_id)
        if config_id == "mode":
            self._set_mode(state, str(value))
            self.updates.update(
                session_id, CurrentModeUpdate(session_update="current_mode_update", current_mode_id=self._mode(state))
            )
        elif config_id in ("model", "thought_level"):
            agent = await self._switch_to(state)
            try:
                if config_id == "model":
                    provider, _, model_id = str(value).partition("/")
                    agent.set_model(provider, model_id)
                else:
                    agent.set_thinking_level(str(value))
            except HostError as exc:
                raise RequestError.invalid_params({"message": str(exc)}) from None
        else:
            raise RequestError.invalid_params({"message": f"Unknown config option: {config_id}"})
        return SetSessionConfigOptionResponse(config_options=self._config(state))

    # --- prompts and cancel ---

    async def prompt(self, prompt: list[Any], session_id: str, **_: Any) -> PromptResponse:
        state = self._state(session_id)
        try:
            text, images = translate.prompt_input(prompt)
        except translate.PromptError as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from None
        agent = self.rt.session
        previous = state.turn
        if (
            agent is not None
            and agent.session.id == state.id
            and agent.is_streaming
            and previous
            and previous.cancelled
        ):
            await agent.wait_idle()  # the cancelled turn is still winding down: this one comes next
        agent = await self._switch_to(state)
        if agent.is_streaming:  # checked before the turn is replaced: the running prompt keeps its own
            raise _failure("The session is already running a prompt; cancel it first")
        turn = state.turn = Turn()
        try:
            disposition = await agent.prompt(text, images or None, None)
        except HostError as exc:
            raise _failure(str(exc)) from None
        if disposition == "started":
            if turn.cancelled:  # cancelled before the run existed
                await agent.abort()
            await agent.wait_idle()
        await self.updates.flush()
        if turn.cancelled:
            return PromptResponse(stop_reason="cancelled")
        try:
            reason = translate.stop_reason(turn.last_assistant if disposition == "started" else None)
        except RuntimeError as exc:
            raise _failure(str(exc)) from None
        meta = None if disposition == "started" else {"atomic": {"disposition": disposition}}
        return PromptResponse(stop_reason=reason, field_meta=meta)  # type: ignore[arg-type]

    async def cancel(self, session_id: str, **_: Any) -> None:
        state = self.sessions.get(session_id)
        agent = self.rt.session
        if state is None or state.turn is None or agent is None or agent.session.id != session_id:
            return
        state.turn.cancelled = True
        for ask in list(self.asking):  # pending permission requests end as cancelled at once
            ask.cancel()
        await agent.abort()

    # --- Atomic-only extensions ---

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "atomic/subscribe":
            self.subscribed = bool(params.get("events", True))
            return {"subscribed": self.subscribed}
        if method == "atomic/command":
            return await self._command(params)
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    async def _command(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """``_atomic/command``: one RPC command (docs/protocol.md), answered with its ``data``."""
        table = self.commands
        ctype = cmd.get("type")
        if not isinstance(ctype, str) or ctype not in table:
            raise RequestError.invalid_params({"message": f"Unknown command: {ctype}"})
        try:
            data = await table[ctype](cmd)  # validates the command against its protocol model
        except HostError as exc:
            raise _failure(str(exc)) from None
        except Exception as exc:
            if type(exc).__name__ == "CommandError":  # validation
                raise RequestError.invalid_params({"message": str(exc)}) from None
            raise _failure(str(exc) or type(exc).__name__) from None
        if data is NO_DATA or data is NO_RESPONSE:
            return {}
        return {"data": _plain(data)}


def _answer(ask: asyncio.Future[Any], timed_out: float | None) -> ApprovalAnswer:
    """The client's answer to a permission request as the approvals plugin reads it."""
    if timed_out is not None:
        return ApprovalAnswer("deny", why=f"the permission request timed out after {round(timed_out * 1000)} ms")
    if ask.cancelled():
        return ApprovalAnswer("deny", why="the permission request was cancelled")
    if ask.exception() is not None:
        log.warning(f"permission request failed: {ask.exception()}")
        return ApprovalAnswer("deny", why=f"the permission request failed: {ask.exception()}")
    outcome = ask.result().outcome
    if outcome.outcome != "selected":
        return ApprovalAnswer("deny", why="the permission request was cancelled")
    choice = {"allow_once": "once", "allow_always": "session", "reject_once": "deny"}.get(outcome.option_id)
    if choice is None:
        return ApprovalAnswer("deny", why=f"the answer {outcome.option_id!r} is not one of the options")
    return ApprovalAnswer(choice)  # type: ignore[arg-type]


def _text(text: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=text)


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


def _title(first: Any) -> str | None:
    if not isinstance(first, str) or first == "(no messages)":
        return None
    line = first.strip().splitlines()[0] if first.strip() else ""
    return line[:80] + ("…" if len(line) > 80 else "") or None


def _plain(data: Any) -> Any:
    """Response data as plain JSON values (``get_tree`` splices pre-encoded JSON)."""
    if isinstance(data, dict) and any(type(v) is RawJSON for v in data.values()):
        return json.loads(dumps_spliced(data))
    return data
