"""The client has every method of the TypeScript ``RpcClient`` (snake_case) and one per declared
command, each returning the response's ``data`` as its typed record; ``collect_events``,
``get_stderr``, ``restart``, ``user_bash_with_updates`` and ``on_extension_ui_request`` work
against the real host."""

from __future__ import annotations

import re
from pathlib import Path

from atomic_host.client import RpcClient, types
from atomic_host.core.protocol.declarations import DECLARATIONS
from atomic_host.testing import start_host

TS_METHODS = """
start stop onEvent onExtensionUIRequest respondExtensionUI restart userBashWithUpdates getStderr
waitForIdle collectEvents promptAndWait prompt steer followUp abort newSession getState setModel
cycleModel getAvailableModels loginProvider saveProviderCredential cancelLoginProvider logoutProvider
refreshModels setThinkingLevel cycleThinkingLevel getAvailableThinkingLevels setSteeringMode
setFollowUpMode compact setAutoCompaction setAutoRetry abortRetry bash abortBash getSessionStats
exportHtml switchSession fork clone getForkMessages getEntries getTree getLastAssistantText
setSessionName getMessages getCommands getCommandCompletions deleteSession
""".split()  # noqa: SIM905
"""Upstream's TypeScript RpcClient (rpc-client.ts, rpc-client-api.ts) and the spec's deleteSession."""


def test_every_typescript_method_and_every_command_has_a_method() -> None:
    snake = {re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower().replace("_u_i", "_ui") for name in TS_METHODS}
    missing = sorted(name for name in snake | set(DECLARATIONS) if not callable(getattr(RpcClient, name, None)))
    assert missing == []


async def test_every_method_returns_its_typed_data() -> None:
    async with start_host() as host:
        c = host.client
        host.faux.push("hello there")
        await c.run("hi")
        state = await c.get_state()
        assert isinstance(state, types.StateData) and state.model is not None and state.model.provider == "faux"
        messages = await c.get_messages()
        assert isinstance(messages, types.MessagesData)
        assert [type(m).__name__ for m in messages.messages] == ["UserMessage", "AssistantMessage"]
        assert (await c.get_last_assistant_text()).text == "hello there"
        models = await c.get_available_models()
        assert isinstance(models.models[0], types.Model) and models.models[0].cost.input >= 0
        sessions = await c.list_sessions()
        assert isinstance(sessions, types.SessionsData) and sessions.sessions[0].id == state.session_id
        assert isinstance(await c.get_commands(), types.CommandsData)
        assert isinstance(await c.get_available_thinking_levels(), types.ThinkingLevelsData)
        assert isinstance(await c.get_fork_messages(), types.ForkMessagesData)
        assert isinstance(await c.list_workflow_runs(), types.WorkflowRunsData)
        assert await c.set_session_name("named") is None  # a command without data returns None
        tree = await c.get_tree()
        assert isinstance(tree.tree[0], types.TreeNode) and isinstance(tree.tree[0].entry, types.SessionEntry)
        stats = await c.get_session_stats()
        assert stats.tokens.total >= 0 and stats.session_id == state.session_id


async def test_collect_events_get_stderr_and_ui_listener(tmp_path: Path) -> None:
    ext = str(Path(__file__).with_name("client_stderr_ext.py"))
    async with start_host("-e", ext) as host:
        c = host.client
        await c.get_state()  # extensions are loaded by now
        assert "client-stderr-marker: loaded" in c.get_stderr()
        seen: list[str] = []
        unsubscribe = c.on_extension_ui_request(lambda request: seen.append(request.method))
        host.faux.push("collected")
        start = len(c.events)
        await c.prompt("go")
        events = await c.collect_events(after=start)
        assert events[0].type == "agent_start" and events[-1].type == "agent_settled"
        assert isinstance(events[-1], types.AgentSettledEvent)
        unsubscribe()
        assert seen == []


async def test_user_bash_with_updates_streams_both_channels() -> None:
    async with start_host() as host:
        chunks: list[tuple[str, str]] = []
        result = await host.client.user_bash_with_updates(
            "echo out; echo err >&2", lambda delta, channel: chunks.append((channel, delta))
        )
        assert isinstance(result, types.BashResultData) and result.exit_code == 0
        assert "".join(d for ch, d in chunks if ch == "stdout") == "out\n"
        assert "".join(d for ch, d in chunks if ch == "stderr") == "err\n"


async def test_restart_reopens_the_session() -> None:
    async with start_host() as host:
        c = host.client
        host.faux.push("before restart")
        first = await c.run("remember me")
        pid = c.proc.pid
        await c.restart(session=first.session_id)
        assert c.proc.pid != pid and c.failure is None
        state = await c.get_state()
        assert state.session_id == first.session_id and state.message_count == 2
        host.faux.path.write_text("")  # the new process reads the faux script from its start
        host.faux.push("after restart")
        second = await c.run("again")
        assert second.text == "after restart" and second.session_id == first.session_id
