"""The parts of a session (engine/active.py, model_state.py, runner.py, prompting.py, recovery.py,
agent_session.py) in process, on a small stand-in for the host's services: a real PluginHost with
real plugin files, a real in-memory Session, no subprocess and no provider."""

from __future__ import annotations

import asyncio
import gc
import textwrap
import weakref
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from atomic_host.contract.commands import SlashCommand
from atomic_host.contract.errors import HostError
from atomic_host.core.settings import Settings
from atomic_host.engine.agent_session import AgentSession, custom_message
from atomic_host.kit.sessions.store import MemoryStore
from atomic_host.plugins.dispatch import Dispatcher
from atomic_host.plugins.manager import PluginHost
from atomic_host.plugins.registry import CommandRegistry

MODELS = [
    {"provider": "p", "id": "m1", "api": "none", "reasoning": True, "contextWindow": 1000},
    {"provider": "p", "id": "m2", "api": "none", "reasoning": False, "contextWindow": 1000},
]
HEADER = "from atomic_host import hookimpl\nfrom atomic_host.contract.results import *\n"


class Registry:
    """The model registry as the session uses it: two models, a key for provider ``p``."""

    def available(self) -> list[dict[str, Any]]:
        return list(MODELS)

    def find(self, provider: str, model_id: str) -> dict[str, Any] | None:
        return next((m for m in MODELS if (m["provider"], m["id"]) == (provider, model_id)), None)

    def auth_status(self, provider: str) -> dict[str, Any]:
        return {"configured": provider == "p"}


class Out:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def send(self, event: dict[str, Any], line: str | None = None) -> None:
        self.events.append(event)

    def types(self) -> list[str]:
        return [e["type"] for e in self.events]


def _rt(tmp_path: Path, *bodies: str) -> Any:
    errors: list[Any] = []
    plugins = PluginHost(lambda *e: errors.append(e))
    for i, body in enumerate(bodies):
        path = tmp_path / f"plugin_{i}.py"
        path.write_text(HEADER + textwrap.dedent(body))
        assert plugins.load_file(path).status == "loaded"
    rt = SimpleNamespace(
        settings=Settings(tmp_path / "settings.json"),
        options=SimpleNamespace(mode="rpc", thinking=None, models=None),
        models=Registry(),
        out=Out(),
        cwd="/tmp",
        commands=CommandRegistry(),
        pending_reload=set(),
        session=None,
        errors=errors,
    )
    rt.hooks = Dispatcher(plugins, api=SimpleNamespace(settings=rt.settings.data))  # type: ignore[arg-type]
    rt.api = SimpleNamespace()
    rt.extension_error = lambda *args: errors.append(args)
    return rt


def _agent(rt: Any) -> AgentSession:
    agent = AgentSession(rt, MemoryStore().new_session("/tmp"))
    rt.session = agent
    return agent


# --- ModelState ---


def test_set_model_records_announces_and_clamps_the_level(tmp_path: Path) -> None:
    rt = _rt(tmp_path)
    agent = _agent(rt)
    agent.set_model("p", "m1")
    agent.set_thinking_level("high")
    assert agent.thinking_level == "high"
    agent.set_model("p", "m2")  # no reasoning: the level is clamped to off, and recorded
    assert (agent.model, agent.thinking_level) == (MODELS[1], "off")
    kinds = [e["type"] for e in agent.session.entries]
    assert kinds == ["model_change", "thinking_level_change", "model_change", "thinking_level_change"]
    assert rt.out.types() == ["model_changed", "thinking_level_changed", "thinking_level_changed", "model_changed"]
    with pytest.raises(HostError, match=r"^Model not found: p/nope$"):
        agent.set_model("p", "nope")


def test_require_model_says_why_none_can_run(tmp_path: Path) -> None:
    agent = _agent(_rt(tmp_path))
    with pytest.raises(HostError, match=r"^No model selected"):
        agent.require_model()
    agent.active.state.fallback_message = "The saved default model is gone"
    with pytest.raises(HostError, match=r"^The saved default model is gone$"):
        agent.require_model()
    agent.model = {"provider": "q", "id": "x", "api": "none"}
    with pytest.raises(HostError, match=r"^No API key found for q"):
        agent.require_model()


def test_cycle_model_and_level(tmp_path: Path) -> None:
    agent = _agent(_rt(tmp_path))
    agent.set_model("p", "m1")
    assert agent.cycle_model(None, persist=False) == {"model": MODELS[1], "thinkingLevel": "off", "isScoped": False}
    assert agent.cycle_model("backward", persist=False)["model"] == MODELS[0]  # type: ignore[index]
    assert agent.cycle_thinking_level() is not None


# --- ActiveSession ---


def test_the_context_is_built_lazily_from_the_branch_and_restores_the_model(tmp_path: Path) -> None:
    rt = _rt(tmp_path)
    session = MemoryStore().new_session("/tmp")
    session.append("model_change", provider="p", modelId="m2")
    session.append("thinking_level_change", thinkingLevel="low")
    session.append("message", message={"role": "user", "content": "hi", "timestamp": 1})
    agent = AgentSession(rt, session)
    agent.rebuild_context()
    assert agent.active._messages is None  # not built yet
    assert (agent.model, agent.thinking_level) == (MODELS[1], "low")
    assert agent.message_count == 1 and agent.active._messages is None  # counted, still not built
    assert [m["role"] for m in agent.messages] == ["user"]
    agent.active.record_message({"role": "assistant", "content": [], "stopReason": "stop", "timestamp": 2})
    assert agent.session.entries[-1]["message"]["role"] == "assistant" and len(agent.messages) == 2


def test_session_name_and_labels_fire_session_info_changed(tmp_path: Path) -> None:
    rt = _rt(tmp_path, "@hookimpl\ndef session_info_changed(event):\n    SEEN.append(event.kind)\nSEEN = []\n")
    agent = _agent(rt)
    agent.set_session_name("  work  ")
    with pytest.raises(HostError, match=r"^Session name cannot be empty$"):
        agent.set_session_name("   ")
    with pytest.raises(HostError, match=r"^Entry nope not found$"):
        agent.set_label("nope", "x")
    assert agent.session.entries[-1] == {**agent.session.entries[-1], "type": "session_info", "name": "work"}
    assert rt.out.types() == ["session_info_changed"] and not rt.errors


# --- Runner ---


def test_a_custom_message_when_idle_is_appended_and_queued_while_streaming(tmp_path: Path) -> None:
    rt = _rt(tmp_path)
    agent = _agent(rt)

    async def scenario() -> None:
        agent.send_custom_message([custom_message("note", "hello")], trigger_turn=False, deliver_as=None)
        assert rt.out.types() == ["message_start", "message_end"]
        assert agent.session.entries[-1]["type"] == "custom_message" and agent.messages[-1]["content"] == "hello"
        with pytest.raises(ValueError, match="deliver_as must be one of"):
            agent.send_custom_message([custom_message("x", "y")], trigger_turn=False, deliver_as="later")
        agent.send_custom_message([custom_message("note", "next")], trigger_turn=False, deliver_as="nextTurn")
        assert [m["content"] for m in agent.runner.next_turn] == ["next"]

    asyncio.run(scenario())


def test_queues_list_user_texts_only_and_abort_when_idle_is_a_no_op(tmp_path: Path) -> None:
    rt = _rt(tmp_path)
    agent = _agent(rt)
    runner = agent.runner
    runner.enqueue("steer", {"role": "user", "content": [{"type": "text", "text": "s1"}], "timestamp": 1}, "s1")
    runner.enqueue("followUp", {"role": "custom", "customType": "c", "content": "x", "timestamp": 1}, None)
    assert (agent.queues.steering, agent.queues.follow_up) == (["s1"], [])
    assert rt.out.events[-1] == {"type": "queue_update", "steering": ["s1"], "followUp": []}
    asyncio.run(agent.abort())
    assert runner.aborts == 1 and not agent.is_streaming and not agent.queues.held


def test_direct_bash_results_wait_for_the_next_prompt_while_a_run_streams(tmp_path: Path) -> None:
    agent = _agent(_rt(tmp_path))
    bash = {"role": "bashExecution", "command": "ls", "output": "", "timestamp": 1}
    agent.add_bash_message(bash)
    assert agent.messages == [bash]

    async def streaming() -> None:
        agent.runner.drive_task = asyncio.create_task(asyncio.sleep(1))
        agent.add_bash_message({**bash, "command": "pwd"})
        assert len(agent.messages) == 1 and len(agent.runner.deferred_bash) == 1
        agent.runner.drive_task.cancel()
        agent.runner.flush_deferred_bash()
        assert [m["command"] for m in agent.messages] == ["ls", "pwd"]

    asyncio.run(streaming())


# --- Prompter ---


def test_slash_commands_input_hooks_and_the_busy_refusal(tmp_path: Path) -> None:
    rt = _rt(
        tmp_path,
        """
        @hookimpl
        def input(event):
            if event.text == "swallow":
                return InputResult.handled()
            return None
        """,
    )
    ran: list[str] = []
    command = SlashCommand(name="go", handler=lambda args, api: ran.append(args))
    rt.commands.add(command, "test", "test.py")
    agent = _agent(rt)

    async def scenario() -> None:
        assert await agent.prompt("/go now", None, None) == "handled" and ran == ["now"]
        assert await agent.prompt("swallow", None, None) == "handled"
        agent.queues.paused = True
        assert await agent.prompt("later", None, "followUp") == "queued"
        assert agent.queues.follow_up == ["later"]
        agent.queues.paused = False
        agent.runner.drive_task = asyncio.create_task(asyncio.sleep(1))
        with pytest.raises(HostError, match=r"^Agent is already processing"):
            await agent.prompt("hi", None, None)
        assert await agent.prompt("hi", None, "steer") == "queued"
        agent.runner.drive_task.cancel()
        with pytest.raises(HostError, match="cannot be queued"):
            await agent.queue_message("steer", "/go x", None)

    asyncio.run(scenario())
    assert not rt.errors


# --- Recovery ---


def test_recovery_marks_interrupted_tool_calls_once(tmp_path: Path) -> None:
    agent = _agent(_rt(tmp_path))
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {}}
    agent.active.record_message({"role": "assistant", "content": [call], "stopReason": "toolUse", "timestamp": 1})
    first = asyncio.run(agent.recovery.recover())
    assert first == {
        "replayed": 0,
        "dropped": 1,
        "completions": 0,
        "notices": ["1 interrupted tool call(s) were marked as failed."],
    }
    assert agent.messages[-1]["toolCallId"] == "c1" and agent.messages[-1]["isError"] is True
    assert asyncio.run(agent.recovery.recover()) is first  # computed once


# --- the facade ---


def test_a_dropped_session_is_freed_without_the_cyclic_collector(tmp_path: Path) -> None:
    rt = _rt(tmp_path)
    agent = AgentSession(rt, MemoryStore().new_session("/tmp"))
    agent.set_model("p", "m1")
    agent.runner.enqueue("steer", {"role": "user", "content": [], "timestamp": 1}, "x")
    parts = [weakref.ref(p) for p in (agent, agent.active, agent.active.state, agent.runner, agent.prompter)]
    enabled = gc.isenabled()
    gc.disable()
    try:
        del agent
        assert [ref() for ref in parts] == [None] * len(parts)
    finally:
        if enabled:
            gc.enable()
