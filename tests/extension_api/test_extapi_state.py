"""Reading the session's state and acting on the run from the API, through the real host: what a
plugin reads is compared with what the client reads over RPC, what it does is seen in the events."""

from __future__ import annotations

from pathlib import Path

from extapi_helpers import errors, plugin, read_log, until

from atomic_host.testing import start_host

LOG = """
import json, os
from atomic_host import SlashCommand, hookimpl

def _log(**fields):
    with open(os.environ["HOOK_LOG"], "a") as f:
        f.write(json.dumps(fields, default=str) + "\\n")
"""

STATE = LOG + """
async def state(args, api):
    _log(model=api.model["id"], thinking=api.thinking_level, name=api.session_name,
         commands=[c["name"] for c in api.get_commands()], scoped=[m["id"] for m in api.scoped_models],
         usage=api.get_context_usage(), prompt=await api.get_system_prompt(),
         idle=api.is_idle(), pending=api.has_pending_messages())

@hookimpl
def system_prompt(event, api):
    return "STATE PLUGIN SECTION"

@hookimpl
def register_commands(register):
    register(SlashCommand(name="state", handler=state, description="log the state"))
"""


async def test_a_plugin_reads_what_the_client_reads(tmp_path: Path) -> None:
    log = tmp_path / "state.jsonl"
    ext = plugin(tmp_path / "state.py", STATE)
    args = ("-e", str(ext), "--models", "faux/faux-1")
    async with start_host(*args, base=tmp_path, env={"HOOK_LOG": str(log)}) as host:
        c = host.client
        await c.call("set_thinking_level", level="high")
        await c.call("set_session_name", name="work")
        host.faux.push("an answer")
        await c.prompt_and_wait("hello")
        assert (await c.prompt("/state"))["disposition"] == "handled"
        state, stats, commands = await c.get_state(), await c.call("get_session_stats"), await c.call("get_commands")
        assert errors(c.events) == []
    seen = read_log(log)[-1]
    assert seen["model"] == state["model"]["id"] == "faux-1"
    assert seen["thinking"] == state["thinkingLevel"] == "high"
    assert seen["name"] == state["sessionName"] == "work"
    assert seen["commands"] == [c["name"] for c in commands["commands"]] and "state" in seen["commands"]
    assert seen["scoped"] == ["faux-1"]
    assert seen["usage"] == stats["contextUsage"] and seen["usage"]["contextWindow"] == 128000
    # the system prompt the model was sent is the one the plugin read
    sent = host.faux_calls()[-1]["context"]["systemPrompt"]
    assert seen["prompt"] == sent and "STATE PLUGIN SECTION" in sent
    assert seen["idle"] is True and seen["pending"] is False


ACTING = LOG + """
async def busy(args, api):
    _log(cmd="busy", idle=api.is_idle(), pending=api.has_pending_messages())
    await api.abort()
    await api.wait_for_idle()
    _log(cmd="busy-after", idle=api.is_idle())

async def squash(args, api):
    result = await api.compact()
    _log(cmd="squash", rung=result["rung"])

async def quit_(args, api):
    api.shutdown()

async def relay(args, api):
    await api.send_user_message("run a tool")  # a run this command starts: its hooks are not the command

@hookimpl
async def tool_call(event, api):
    await api.wait_for_idle()  # in the run itself: refused (it would wait for itself)

@hookimpl
async def input(event, api):
    if event.text == "wait in a hook":
        await api.wait_for_idle()  # refused: not a command

@hookimpl
def session_shutdown(event, api):
    _log(hook="session_shutdown", reason=event.reason)

@hookimpl
def host_shutdown(api):
    _log(hook="host_shutdown")

@hookimpl
def register_commands(register):
    register(SlashCommand(name="busy", handler=busy))
    register(SlashCommand(name="squash", handler=squash))
    register(SlashCommand(name="quit", handler=quit_))
    register(SlashCommand(name="relay", handler=relay))
"""


async def test_abort_compact_idle_pending_and_shutdown_from_commands(tmp_path: Path) -> None:
    log = tmp_path / "acting.jsonl"
    ext = plugin(tmp_path / "acting.py", ACTING)
    async with start_host("-e", str(ext), base=tmp_path, env={"HOOK_LOG": str(log)}) as host:
        c = host.client
        host.faux.push({"content": [{"type": "text", "text": "a long answer " * 50}], "chunkDelayMs": 40})
        start = len(c.events)
        await c.prompt("\n".join(f"requirement {i}: keep widget {i} working" for i in range(30)))
        await c.wait_for_event("message_update", after=start)
        await c.steer("and another thing")
        await c.prompt("/busy")  # mid-stream: commands run at once
        await c.wait_for_idle(after=start)
        busy = [r for r in read_log(log) if r.get("cmd", "").startswith("busy")]
        assert busy == [{"cmd": "busy", "idle": False, "pending": True}, {"cmd": "busy-after", "idle": True}]
        ends = [e for e in c.events[start:] if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
        assert ends[-1]["message"]["stopReason"] == "aborted"
        host.faux.push("second answer")
        await c.prompt_and_wait("now the second thing")
        host.faux.push("1,5\n9,12")  # the compaction planner's reply
        await c.prompt("/squash")
        assert [r["rung"] for r in read_log(log) if r.get("cmd") == "squash"] == ["planned"]
        assert any(e["type"] == "compaction" for e in (await c.call("get_entries"))["entries"])
        before = len(c.events)
        refused = await c.prompt("wait in a hook")
        assert refused["disposition"] == "started"  # the hook failed, the prompt went on
        await c.wait_for_idle(after=before)
        [error] = [e for e in errors(c.events) if e["event"] == "input"]
        assert "api.wait_for_idle() is only available in a slash command's or a shortcut's handler" in error["error"]
        host.faux.tool_call("bash", {"command": "echo relayed"})
        host.faux.push("relayed")
        before = len(c.events)
        await c.prompt("/relay")
        await c.wait_for_idle(after=before)
        [gate] = [e for e in errors(c.events) if e["event"] == "tool_call"]
        assert "api.wait_for_idle() is only available in a slash command's" in gate["error"]
        response = await c.request({"type": "prompt", "message": "/quit"})
        assert response["success"] and response["data"] == {"disposition": "handled"}
        await until(lambda: c.proc is not None and c.proc.returncode is not None)
        assert c.proc.returncode == 0
    hooks = [r["hook"] for r in read_log(log) if "hook" in r]
    assert hooks[-2:] == ["session_shutdown", "host_shutdown"]


def test_shutdown_in_print_mode_aborts_the_run(tmp_path: Path) -> None:
    """Print mode has no client to leave: ``api.shutdown()`` aborts the run, and the one prompt ends."""
    import json
    import os
    import subprocess
    import sys

    ext = plugin(
        tmp_path / "stop.py",
        """
        from atomic_host import hookimpl

        @hookimpl
        def on_event(event, api):
            if event["type"] == "message_update":
                api.shutdown()
        """,
    )
    script = tmp_path / "faux.jsonl"
    script.write_text(json.dumps({"content": [{"type": "text", "text": "word " * 400}], "chunkDelayMs": 50}) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_")}
    env.update(ATOMIC_CODING_AGENT_DIR=str(tmp_path / "agent"), ATOMIC_FAUX_SCRIPT=str(script))
    done = subprocess.run(
        [sys.executable, "-m", "atomic_host", "--provider", "faux", "--no-session", "-e", str(ext),
         "--mode", "json", "-p", "talk for a long time"],
        capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path,
    )  # fmt: skip
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    ends = [e for e in events if e.get("type") == "message_end" and e["message"]["role"] == "assistant"]
    assert ends and ends[-1]["message"]["stopReason"] == "aborted", done.stderr
