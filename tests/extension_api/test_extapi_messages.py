"""send_user_message with images and template expansion, send_messages, the event bus between
extensions and extension command-line flags, through the real host."""

from __future__ import annotations

import asyncio
from pathlib import Path

from extapi_helpers import errors, plugin, read_log, until

from atomic_host.testing import start_host

PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="

SENDER = f"""
from atomic_host import SlashCommand, hookimpl

async def look(args, api):
    await api.send_user_message([{{"type": "text", "text": "what is this?"}},
                                 {{"type": "image", "data": "{PIXEL}", "mimeType": "image/png"}}])

async def expand(args, api):
    await api.send_user_message("/greet Bob", expand_prompt_templates=True)

async def literal(args, api):
    await api.send_user_message("/greet Ann")

async def notes(args, api):
    await api.send_messages([{{"customType": "note", "content": "one"}},
                             {{"customType": "note", "content": "two", "display": False}}], trigger_turn=True)

@hookimpl
def register_commands(register):
    for name, fn in [("look", look), ("expand", expand), ("literal", literal), ("notes", notes)]:
        register(SlashCommand(name=name, handler=fn))
"""


def _user_texts(call: dict) -> list:
    return [m["content"] for m in call["context"]["messages"] if m["role"] == "user"]


async def test_send_user_message_with_images_and_templates_and_send_messages(tmp_path: Path) -> None:
    ext = plugin(tmp_path / "sender.py", SENDER)
    (tmp_path / "agent" / "prompts").mkdir(parents=True)
    (tmp_path / "agent" / "prompts" / "greet.md").write_text("Say hello to $1\n")
    async with start_host("-e", str(ext), base=tmp_path) as host:
        c = host.client
        for command, reply in [("/look", "a pixel"), ("/expand", "hello Bob"), ("/literal", "ok"), ("/notes", "noted")]:
            host.faux.push(reply)
            start = len(c.events)
            await c.prompt(command)
            await c.wait_for_idle(after=start)
        calls = host.faux_calls()
        assert errors(c.events) == []
    image_call, expanded, literal, notes = calls
    last = image_call["context"]["messages"][-1]["content"]
    assert {"type": "image", "data": PIXEL, "mimeType": "image/png"} in last
    assert {"type": "text", "text": "what is this?"} in last
    assert "Say hello to Bob" in str(_user_texts(expanded)[-1])
    assert "/greet Ann" in str(_user_texts(literal)[-1])
    # two custom messages, in order, one run (they reach the model as user content)
    tail = [str(m["content"]) for m in notes["context"]["messages"][-2:]]
    assert "one" in tail[0] and "two" in tail[1]


BUS_A = """
import json, os
from atomic_host import hookimpl

def _log(**fields):
    with open(os.environ["HOOK_LOG"], "a") as f:
        f.write(json.dumps(fields) + "\\n")

_off = []

@hookimpl
def host_start(api):
    api.events.on("ping", lambda data: _log(listener="sync", data=data))

    async def later(data):
        _log(listener="async", data=data)
    _off.append(api.events.on("ping", later))
    api.events.on("ping", lambda data: 1 / 0)

@hookimpl
def register_commands(register):
    from atomic_host import SlashCommand

    def off(args, api):
        _off.pop()()
    register(SlashCommand(name="off", handler=off))
"""

BUS_B = """
from atomic_host import SlashCommand, hookimpl

def ping(args, api):
    api.events.emit("ping", {"n": int(args)})

@hookimpl
def register_commands(register):
    register(SlashCommand(name="ping", handler=ping))
"""


async def test_the_event_bus_connects_extensions(tmp_path: Path) -> None:
    log = tmp_path / "bus.jsonl"
    a, b = plugin(tmp_path / "bus_a.py", BUS_A), plugin(tmp_path / "bus_b.py", BUS_B)
    async with start_host("-e", str(a), "-e", str(b), base=tmp_path, env={"HOOK_LOG": str(log)}) as host:
        c = host.client
        await c.prompt("/ping 1")
        await until(lambda: len(read_log(log)) == 2)
        await c.prompt("/off")
        await c.prompt("/ping 2")
        await until(lambda: len(read_log(log)) == 3)
        await asyncio.sleep(0.2)  # an async listener left subscribed would have logged by now
        reported = [e for e in errors(c.events) if e["event"] == "events:ping"]
    assert read_log(log) == [
        {"listener": "sync", "data": {"n": 1}},
        {"listener": "async", "data": {"n": 1}},
        {"listener": "sync", "data": {"n": 2}},
    ]
    assert len(reported) == 2 and all("ZeroDivisionError" in e["error"] for e in reported)
    assert all(e["extensionPath"] == str(a) for e in reported)


FLAGS = """
import json, os
from atomic_host import SlashCommand, hookimpl

@hookimpl
def register_commands(register, api):
    api.register_flag("plan", type="boolean", default=False, description="plan mode")
    api.register_flag("level", type="string", default="low")
    api.register_flag("style", type="string", default="plain")

    def show(args, api):
        with open(os.environ["HOOK_LOG"], "a") as f:
            f.write(json.dumps({n: api.get_flag(n) for n in ("plan", "level", "style", "nobody")}) + "\\n")
    register(SlashCommand(name="flags", handler=show))
"""


async def test_extension_flags_from_the_command_line(tmp_path: Path) -> None:
    log = tmp_path / "flags.jsonl"
    ext = plugin(tmp_path / "flags.py", FLAGS)
    args = ("-e", str(ext), "--plan", "--level", "high")
    async with start_host(*args, base=tmp_path, env={"HOOK_LOG": str(log)}) as host:
        await host.client.prompt("/flags")
        await until(lambda: read_log(log) != [])
    assert read_log(log) == [{"plan": True, "level": "high", "style": "plain", "nobody": None}]


async def test_an_undeclared_flag_stops_the_start(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    ext = plugin(tmp_path / "flags.py", FLAGS)
    cases = [(["--nope"], "Unknown option: --nope"), (["--level"], 'Extension flag "--level" requires a value')]
    for extra, message in cases:
        done = subprocess.run(
            [sys.executable, "-m", "atomic_host", "--mode", "rpc", "--no-session", "-e", str(ext), *extra],
            input="", capture_output=True, text=True, timeout=60,
            env={**os.environ, "ATOMIC_CODING_AGENT_DIR": str(tmp_path / "agent")},
        )  # fmt: skip
        assert done.returncode == 1 and message in done.stderr and done.stdout == ""
