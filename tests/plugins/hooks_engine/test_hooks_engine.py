"""The engine's hooks through the real host: each implemented in a real plugin file loaded with
``-e``, driven over RPC with the faux provider (its log shows what the model was sent)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from atomic_host.testing import start_host


def _plugin(tmp_path: Path, body: str, name: str = "hooks_ext.py") -> Path:
    path = tmp_path / name
    path.write_text("from atomic_host import *\nfrom atomic_host import hookimpl\n" + body)
    return path


def _of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e.get("type") == kind]


def _texts(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


CONTEXT = """
import asyncio

@hookimpl
async def context(event, api):
    await asyncio.sleep(0)  # async implementations are awaited
    kept = [m for m in event.messages if "forget me" not in str(m.get("content"))]
    return ContextResult(kept + [{"role": "user", "content": [{"type": "text", "text": "reminder: be brief"}],
                                  "timestamp": 0}])

@hookimpl
def context(event, api):
    # the second implementation sees the first one's result (chain)
    assert event.messages[-1]["content"][0]["text"] == "reminder: be brief"
    assert event.model["provider"] == "faux"
    return None
"""


async def test_context_edits_what_each_model_call_sends_and_not_the_session(tmp_path: Path) -> None:
    # Two implementations in two files: pluggy calls the later-registered one first.
    second = _plugin(tmp_path, CONTEXT.split("@hookimpl\ndef context")[0], "context_a.py")
    first = _plugin(tmp_path, "@hookimpl\ndef context" + CONTEXT.split("@hookimpl\ndef context")[1], "context_b.py")
    async with start_host("-e", str(first), "-e", str(second)) as host:
        host.faux.push("first answer", "second answer")
        await host.client.prompt_and_wait("please forget me")
        await host.client.prompt_and_wait("and now this")
        calls = host.faux_calls()
        assert len(calls) == 2
        for call in calls:
            sent = [_texts(m) for m in call["context"]["messages"]]
            assert "please forget me" not in sent and sent[-1] == "reminder: be brief"
        assert "and now this" in [_texts(m) for m in calls[1]["context"]["messages"]]
        saved = [_texts(m) for m in (await host.client.get_messages()).messages]
        assert saved == ["please forget me", "first answer", "and now this", "second answer"]
        errors = [e for e in host.client.events if e.get("type") == "extension_error"]
        assert errors == []


MESSAGE_END = """
@hookimpl
def message_end(event, api):
    m = event.message
    if m["role"] == "assistant":
        content = [{**b, "text": b["text"].replace("hunter2", "[redacted]")} if b.get("type") == "text" else b
                   for b in m["content"]]
        return MessageEndResult({**m, "content": content})
    if m["role"] == "user" and _t(m) == "swap my role":
        return MessageEndResult({**m, "role": "assistant"})  # a different role: reported, ignored
    if m["role"] == "toolResult":
        return MessageEndResult({**m, "details": {"seen_by": "message_end"}})
    return None

def _t(m):
    return "".join(b.get("text", "") for b in m["content"])
"""


async def test_message_end_replaces_a_finished_message_of_the_same_role(tmp_path: Path) -> None:
    async with start_host("-e", str(_plugin(tmp_path, MESSAGE_END))) as host:
        host.faux.push(
            {"content": [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "echo hi"}}]},
            "the password is hunter2",
            "fine",
        )
        events = await host.client.prompt_and_wait("tell me")
        ends = [e["message"] for e in _of(events, "message_end")]
        assert _texts(ends[-1]) == "the password is [redacted]"
        tool_result = next(m for m in ends if m["role"] == "toolResult")
        assert tool_result["details"] == {"seen_by": "message_end"}
        saved = (await host.client.get_messages()).messages
        assert _texts(saved[-1]) == "the password is [redacted]"
        assert next(m for m in saved if m["role"] == "toolResult")["details"] == {"seen_by": "message_end"}
        events = await host.client.prompt_and_wait("swap my role")
        user = next(e["message"] for e in _of(events, "message_end") if e["message"]["role"] == "user")
        assert _texts(user) == "swap my role"
        errors = [e for e in host.client.events if e.get("type") == "extension_error"]
        assert len(errors) == 1 and errors[0]["event"] == "message_end"
        assert "role 'user'" in errors[0]["error"]


TERMINATE = """
@hookimpl
def tool_call(event, api):
    if event.input.get("command") == "echo stop-here":
        return ToolCallDecision(terminate=True)
    if event.input.get("command") == "echo refuse-and-stop":
        return ToolCallDecision(block=True, reason="not this one", terminate=True)
    return None
"""


async def test_tool_call_terminate_ends_the_run_after_the_tool_batch(tmp_path: Path) -> None:
    def call(command: str, call_id: str) -> dict[str, Any]:
        return {"type": "toolCall", "id": call_id, "name": "bash", "arguments": {"command": command}}

    async with start_host("-e", str(_plugin(tmp_path, TERMINATE))) as host:
        # Only the tool-call reply is scripted: a second model call would end in "No more faux responses".
        host.faux.push({"content": [call("echo stop-here", "c1"), call("echo also-runs", "c2")]})
        events = await host.client.prompt_and_wait("go")
        ends = {e["toolCallId"]: e for e in _of(events, "tool_execution_end")}
        assert ends["c1"]["result"]["content"][0]["text"].strip() == "stop-here"
        assert ends["c2"]["result"]["content"][0]["text"].strip() == "also-runs"  # the batch finishes
        assert len(host.faux_calls()) == 1  # no model call after the batch
        assert [e["type"] for e in events][-2:] == ["agent_end", "agent_settled"]
        assert [m["role"] for m in _of(events, "agent_end")[0]["messages"]] == [
            "user", "assistant", "toolResult", "toolResult"
        ]
        # blocked and terminating: an error result, then the run ends too
        host.faux.push({"content": [call("echo refuse-and-stop", "c3")]})
        events = await host.client.prompt_and_wait("again")
        end = _of(events, "tool_execution_end")[0]
        assert end["isError"] and end["result"]["content"][0]["text"] == "not this one"
        assert len(host.faux_calls()) == 2
        failed = [e for e in _of(list(host.client.events), "message_end") if e["message"].get("errorMessage")]
        assert failed == []


SELECT = """
import json, os

LOG = os.environ["SELECT_LOG"]

def _write(record):
    with open(LOG, "a") as f:
        f.write(json.dumps(record) + "\\n")

@hookimpl
def model_select(event, api):
    _write({"hook": "model_select", "model": event.model["id"],
            "previous": (event.previous_model or {}).get("id"), "source": event.source})

@hookimpl
def thinking_level_select(event, api):
    _write({"hook": "thinking_level_select", "level": event.level, "previous": event.previous_level})
"""


async def test_model_select_and_thinking_level_select_observe_changes(tmp_path: Path) -> None:
    log = tmp_path / "select.jsonl"
    models = {
        "providers": {
            "other": {
                "baseUrl": "http://127.0.0.1:9",
                "api": "openai-completions",
                "apiKey": "sk-other-0000",
                "models": [{"id": "o1", "reasoning": True}],
            }
        }
    }
    async with start_host("-e", str(_plugin(tmp_path, SELECT)), env={"SELECT_LOG": str(log)}) as host:
        (host.agent_dir / "models.json").write_text(json.dumps(models))
        state = await host.client.get_state()
        first_model = state["model"]["id"]
        await host.client.set_thinking_level("high")
        await host.client.set_thinking_level("high")  # unchanged: not reported
        await host.client.call("set_model", provider="faux", modelId=first_model)
        records = [json.loads(line) for line in log.read_text().splitlines()]
    assert records[0]["hook"] == "thinking_level_select" and records[0]["level"] == "high"
    assert sum(r["hook"] == "thinking_level_select" for r in records) == 1
    select = [r for r in records if r["hook"] == "model_select"]
    assert select == [{"hook": "model_select", "model": first_model, "previous": first_model, "source": "set"}]


TYPED_ONLY = """
@hookimpl
def before_agent_start(event, api):
    return {"system_prompt": "a dict is not a result"}

@hookimpl
def tool_result(event, api):
    return {"content": []}

@hookimpl
def system_prompt(event, api):
    return "House rule: answer in haiku. Tools seen: " + ",".join(sorted(event.tools)[:2])
"""


async def test_dict_results_are_reported_and_ignored(tmp_path: Path) -> None:
    async with start_host("-e", str(_plugin(tmp_path, TYPED_ONLY))) as host:
        host.faux.push(
            {"content": [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "echo kept"}}]},
            "done",
        )
        events = await host.client.prompt_and_wait("hi")
        assert _of(events, "tool_execution_end")[0]["result"]["content"][0]["text"].strip() == "kept"
        system = host.faux_calls()[0]["context"]["systemPrompt"]
        assert "a dict is not a result" not in system
        assert "\n\nHouse rule: answer in haiku. Tools seen: ask_user_question,bash\n" in system
        errors = {e["event"]: e["error"] for e in host.client.events if e.get("type") == "extension_error"}
        assert errors == {
            "before_agent_start": "returned dict; expected AgentStartResult or None",
            "tool_result": "returned dict; expected ToolPatch or ToolResult or None",
        }


RUNTIME_TOOLS = """
from pydantic import BaseModel

class Params(BaseModel):
    word: str

async def shout(params, ctx):
    return params.word.upper()

@hookimpl
def register_commands(register, api):
    async def add(args, api):
        api.register_tool(Tool(name="shout", description="Shout a word", params=Params, handler=shout))
        api.ui.notify("added")

    async def drop(args, api):
        api.unregister_tool("shout")
        try:
            api.unregister_tool("read")
        except HostError as exc:
            api.ui.notify(str(exc))

    register(SlashCommand(name="add-shout", description="", handler=add))
    register(SlashCommand(name="drop-shout", description="", handler=drop))
"""


async def test_tools_registered_and_unregistered_at_run_time(tmp_path: Path) -> None:
    async with start_host("-e", str(_plugin(tmp_path, RUNTIME_TOOLS))) as host:
        host.faux.push("no tool yet")
        await host.client.prompt_and_wait("hi")
        assert "shout" not in [t["name"] for t in host.faux_calls()[0]["context"]["tools"]]
        await host.client.prompt_and_wait("/add-shout")
        host.faux.push({"content": [{"type": "toolCall", "id": "s1", "name": "shout", "arguments": {"word": "hey"}}]},
                       "shouted")
        events = await host.client.prompt_and_wait("shout hey")
        assert "shout" in [t["name"] for t in host.faux_calls()[1]["context"]["tools"]]
        end = _of(events, "tool_execution_end")[0]
        assert not end["isError"] and end["result"]["content"][0]["text"] == "HEY"
        await host.client.prompt_and_wait("/drop-shout")
        notes = [e["message"] for e in host.client.events if e.get("method") == "notify"]
        assert notes[-1] == 'Tool "read" is built in; deactivate it with set_active_tools instead'
        host.faux.push({"content": [{"type": "toolCall", "id": "s2", "name": "shout", "arguments": {"word": "x"}}]},
                       "ok")
        events = await host.client.prompt_and_wait("shout again")
        assert "shout" not in [t["name"] for t in host.faux_calls()[3]["context"]["tools"]]
        end = _of(events, "tool_execution_end")[0]
        assert end["isError"] and end["result"]["content"][0]["text"] == "Tool shout not found"
