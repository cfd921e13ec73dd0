"""Session control from commands and shortcuts (new_session, switch_session, navigate_tree, fork,
wait_for_idle), shortcuts over RPC (get_shortcuts, invoke_shortcut) and reload, through the real host."""

from __future__ import annotations

import json
from pathlib import Path

from extapi_helpers import errors, plugin, read_log

from atomic_host.testing import start_host

NAV = """
import json, os
from atomic_host import SlashCommand, hookimpl

def _log(**fields):
    with open(os.environ["HOOK_LOG"], "a") as f:
        f.write(json.dumps(fields) + "\\n")

def _first_user(api):
    return next(e["id"] for e in api.session_entries()
                if e["type"] == "message" and e["message"]["role"] == "user")

async def tour(args, api):
    first = api.session_id
    fresh = await api.new_session()
    second = api.session_id
    back = await api.switch_session(first)
    moved = await api.navigate_tree(_first_user(api))
    _log(first=first, second=second, now=api.session_id, fresh=fresh, back=back, moved=moved)

async def branch(args, api):
    await api.wait_for_idle()
    source = api.session_id
    forked = await api.fork(_first_user(api))
    _log(source=source, forked=forked, now=api.session_id, file=api.session_file)

async def clone(api):
    await api.wait_for_idle()
    source = api.session_id
    cloned = await api.fork(api.session_entries()[-1]["id"], position="at")
    _log(shortcut="clone", source=source, cloned=cloned, now=api.session_id)

def broken(api):
    raise ValueError("shortcut broke")

@hookimpl
def register_commands(register, api):
    register(SlashCommand(name="tour", handler=tour))
    register(SlashCommand(name="branch", handler=branch))
    api.register_shortcut("Ctrl+Shift+C", clone, description="Clone the session here")
    api.register_shortcut("ctrl+b", broken)

@hookimpl
def session_start(event, api):
    _log(hook="session_start", reason=event.reason, session=api.session_id)
"""


async def test_commands_and_shortcuts_move_between_sessions(tmp_path: Path) -> None:
    log = tmp_path / "nav.jsonl"
    ext = plugin(tmp_path / "nav.py", NAV)
    async with start_host("-e", str(ext), base=tmp_path, env={"HOOK_LOG": str(log)}) as host:
        c = host.client
        host.faux.push("first answer")
        await c.prompt_and_wait("the first prompt")
        await c.prompt("/tour")
        tour = next(r for r in read_log(log) if "moved" in r)
        assert tour["fresh"] == {"cancelled": False} and tour["back"] == {"cancelled": False}
        assert tour["second"] != tour["first"] and tour["now"] == tour["first"]
        assert tour["moved"] == {"cancelled": False, "editorText": "the first prompt"}
        state = await c.get_state()
        assert state["sessionId"] == tour["first"]
        # fork from a command, while a run streams: it waits for the run, then forks and switches
        host.faux.push("second answer")
        await c.prompt_and_wait("the second prompt")
        host.faux.push({"content": [{"type": "text", "text": "slow " * 20}], "chunkDelayMs": 20})
        start = len(c.events)
        await c.prompt("the third prompt")
        await c.prompt("/branch")
        fork = next(r for r in read_log(log) if "forked" in r)
        assert [e["type"] for e in c.events[start:]].count("agent_end") == 1  # the run ended before the fork
        assert fork["forked"] == {"cancelled": False, "text": "the first prompt"}  # the first user entry
        assert fork["now"] != fork["source"] and (await c.get_state())["sessionId"] == fork["now"]
        # shortcuts: listed, invoked, unknown, failing
        shortcuts = (await c.call("get_shortcuts"))["shortcuts"]
        assert shortcuts == [{"key": "ctrl+shift+c", "description": "Clone the session here"}, {"key": "ctrl+b"}]
        host.faux.push("in the fork")
        await c.prompt_and_wait("a prompt in the fork")  # a fork before the first prompt is not saved yet
        assert await c.call("invoke_shortcut", key="ctrl+shift+C") is None
        cloned = next(r for r in read_log(log) if r.get("shortcut") == "clone")
        assert cloned["cloned"] == {"cancelled": False} and cloned["now"] != cloned["source"]
        unknown = await c.request({"type": "invoke_shortcut", "key": "ctrl+q"})
        assert unknown == {**unknown, "success": False, "error": "Shortcut not found: ctrl+q"}
        failed = await c.request({"type": "invoke_shortcut", "key": "ctrl+b"})
        assert not failed["success"] and failed["error"].endswith("ValueError: shortcut broke")
        [reported] = errors(c.events)
        assert reported["extensionPath"] == "shortcut:ctrl+b" and reported["event"] == "shortcut"
    reasons = [r["reason"] for r in read_log(log) if r.get("hook") == "session_start"]
    assert reasons == ["startup", "new", "resume", "fork", "fork"]


RELOADED = """
import json, os
from atomic_host import SlashCommand, hookimpl

VERSION = {version}

def _log(**fields):
    with open(os.environ["HOOK_LOG"], "a") as f:
        f.write(json.dumps(fields) + "\\n")

async def again(args, api):
    await api.reload()

@hookimpl
def register_commands(register):
    register(SlashCommand(name="v{version}", handler=again))

@hookimpl
def session_start(event, api):
    _log(hook="session_start", reason=event.reason, version=VERSION)

@hookimpl
def session_shutdown(event, api):
    _log(hook="session_shutdown", reason=event.reason, version=VERSION)
"""


async def test_reload_discovers_extensions_templates_and_settings_again(tmp_path: Path) -> None:
    log = tmp_path / "reload.jsonl"
    agent = tmp_path / "agent"
    (agent / "extensions").mkdir(parents=True)
    (agent / "prompts").mkdir()
    ext = agent / "extensions" / "reloaded.py"
    ext.write_text(RELOADED.format(version=1))
    async with start_host(base=tmp_path, env={"HOOK_LOG": str(log)}) as host:
        c = host.client
        names = {x["name"] for x in (await c.call("get_commands"))["commands"]}
        assert "v1" in names and "greet" not in names
        ext.write_text(RELOADED.format(version=2))
        (agent / "prompts" / "greet.md").write_text("Say hello to $1\n")
        (agent / "extensions" / "extra.py").write_text(
            "from atomic_host import SlashCommand, hookimpl\n\n"
            "@hookimpl\ndef register_commands(register):\n"
            "    register(SlashCommand(name='extra', handler=lambda args, api: None))\n"
        )
        (agent / "settings.json").write_text(json.dumps({"steeringMode": "all", "hookTimeoutMs": 1234}))
        assert await c.call("reload") is None
        names = {x["name"] for x in (await c.call("get_commands"))["commands"]}
        assert {"v2", "greet", "extra"} <= names and "v1" not in names
        # from a command of the reloaded extension: api.reload() does the same
        await c.prompt("/v2")
        host.faux.push({"content": [{"type": "text", "text": "slow " * 30}], "chunkDelayMs": 20})
        start = len(c.events)
        await c.prompt("a long one")
        refused = await c.request({"type": "reload"})
        assert refused["error"] == "Cannot reload while the agent is streaming"
        await c.wait_for_idle(after=start)
        assert errors(c.events) == []
    records = [(r["hook"], r["reason"], r["version"]) for r in read_log(log)]
    assert records == [
        ("session_start", "startup", 1),
        ("session_shutdown", "reload", 1),
        ("session_start", "reload", 2),
        ("session_shutdown", "reload", 2),
        ("session_start", "reload", 2),
        ("session_shutdown", "quit", 2),
    ]


async def test_session_control_outside_a_command_is_refused(tmp_path: Path) -> None:
    ext = plugin(
        tmp_path / "early.py",
        """
        from atomic_host import hookimpl

        @hookimpl
        async def session_start(event, api):
            await api.new_session()
        """,
    )
    async with start_host("-e", str(ext), base=tmp_path) as host:
        state = await host.client.get_state()
        [error] = errors(host.client.events)
    assert error["event"] == "session_start"
    assert "api.new_session() is only available in a slash command's or a shortcut's handler" in error["error"]
    assert state["sessionId"]
