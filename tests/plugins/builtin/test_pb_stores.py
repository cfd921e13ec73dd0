"""``register_session_stores`` through the real host: a third-party store kind picked by the
``sessionStore`` setting, unknown kinds, the built-in ``stores`` plugin blocked, a replaced kind."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from pb_helpers import atomic, chat, store_plugin, texts

from atomic_host.testing import start_host


async def test_a_plugin_store_kind_chosen_by_the_setting_holds_every_session(base: Path) -> None:
    plugin = store_plugin(base)
    settings = {"sessionStore": "onefile"}
    async with start_host("-e", str(plugin), base=base, settings=settings) as host:
        await chat(host, "first")
        first = await host.client.call("get_state")
        assert first["sessionLocation"] == f"onefile:{first['sessionId']}"
        assert (await host.client.call("new_session")) == {"cancelled": False}
        await chat(host, "second", "third")
        second = await host.client.call("get_state")
        listed = (await host.client.call("list_sessions"))["sessions"]
        assert sorted((s["path"], s["messageCount"], s["firstMessage"]) for s in listed) == sorted(
            [(first["sessionLocation"], 2, "first"), (second["sessionLocation"], 4, "second")]
        )
        switched = await host.client.call("switch_session", sessionPath=first["sessionLocation"])
        assert switched == {"cancelled": False}
        assert (await host.client.call("get_state"))["sessionId"] == first["sessionId"]
        messages = (await host.client.call("get_messages"))["messages"]
        assert texts(messages) == ["first", "re: first"]
        await chat(host, "more")  # appends go through the plugin's writer
        host.assert_protocol_lines()
    data = json.loads((base / "agent" / "onefile.json").read_text())
    assert set(data) == {first["sessionId"], second["sessionId"]}
    assert message_texts(data[first["sessionId"]]) == ["first", "re: first", "more", "re: more"]
    assert message_texts(data[second["sessionId"]]) == ["second", "re: second", "third", "re: third"]
    assert not (base / "agent" / "sessions").exists()  # nothing went to the built-in JSONL store
    # --session-store on the command line, and a second process reads what the first wrote
    async with start_host("-e", str(plugin), "--session-store", "onefile", "-c", base=base) as host:
        state = await host.client.call("get_state")
        assert state["sessionId"] == first["sessionId"] and state["messageCount"] == 4


def message_texts(records: list[dict]) -> list[str]:
    """The texts of the message entries the one-file store holds for a session."""
    return texts([r["message"] for r in records if r.get("type") == "message"])


def test_an_unknown_kind_stops_the_host_naming_the_known_ones(base: Path) -> None:
    result = atomic(base, "--mode", "rpc", "--provider", "faux", "--session-store", "nosuch")
    assert result.returncode == 1 and result.stdout == ""
    assert (
        'Unknown session store "nosuch" (sessionStore setting / --session-store); '
        "known kinds: jsonl, memory, postgres, sqlite"
        in result.stderr
    )


async def test_with_the_stores_plugin_blocked_no_session_works_and_a_store_is_refused_clearly(base: Path) -> None:
    settings = {"disabledPlugins": ["builtin_plugins.stores"]}
    async with start_host("--no-session", base=base, settings=settings) as host:
        await chat(host, "hello")
        state = await host.client.call("get_state")
        assert state["messageCount"] == 2 and "sessionLocation" not in state
        assert (await host.client.call("list_sessions")) == {"sessions": []}
        host.assert_protocol_lines()
    result = atomic(base, "--mode", "rpc", "--provider", "faux")
    assert result.returncode == 1
    assert (
        'Unknown session store "jsonl" (sessionStore setting / --session-store); known kinds: none. '
        "disabled by disabledPlugins: builtin_plugins.stores" in result.stderr
    )
    listed = json.loads(atomic(base, "plugins", "--json").stdout)["plugins"]
    assert {p["name"]: p["status"] for p in listed}["builtin_plugins.stores"] == "disabled"


async def test_a_plugin_replaces_a_builtin_kind_and_says_so(base: Path) -> None:
    plugin = store_plugin(base, "jsonl")  # the default kind, taken over
    async with start_host("-e", str(plugin), base=base, stderr=subprocess.PIPE) as host:
        await chat(host, "hi")
        state = await host.client.call("get_state")
        assert state["sessionLocation"] == f"onefile:{state['sessionId']}"
    err = (await host.client.proc.stderr.read()).decode()
    assert f"atomic: store kind 'jsonl' of builtin_plugins.stores replaced by local:{plugin}" in err
    assert state["sessionId"] in json.loads((base / "agent" / "onefile.json").read_text())


def test_atomic_plugins_lists_the_new_builtins_with_their_hooks(base: Path) -> None:
    listed = {p["name"]: p for p in json.loads(atomic(base, "plugins", "--json").stdout)["plugins"]}
    assert listed["builtin_plugins.stores"]["status"] == "loaded"
    assert listed["builtin_plugins.stores"]["hooks"] == ["register_session_stores"]
    assert listed["builtin_plugins.export_html"]["status"] == "loaded"
    assert listed["builtin_plugins.export_html"]["hooks"] == ["register_exporters"]


SLOW_OPEN = '''

import time


class SlowStore(OneFileStore):
    """A store far away (a remote database): opening a session takes a second."""

    def open(self, session_id, directory=None):
        time.sleep(1.0)
        return super().open(session_id, directory)

    def most_recent(self, cwd):
        time.sleep(1.0)
        return super().most_recent(cwd)


def open_onefile(options):
    return SlowStore(Path(options.session_dir or options.agent_dir) / "onefile.json", options.cwd)
'''


async def test_a_slow_store_opens_the_startup_session_off_the_event_loop(base: Path) -> None:
    """--continue / --session at startup call the store in a thread, as switch_session does: the
    loop watchdog (300 ms here) sees no stall while the store takes a second."""
    plugin = store_plugin(base)
    async with start_host("-e", str(plugin), base=base, settings={"sessionStore": "onefile"}) as host:
        await chat(host, "first")
        first = (await host.client.call("get_state"))["sessionId"]
    plugin.write_text(plugin.read_text() + SLOW_OPEN)
    log = base / "stderr.txt"
    settings = {"sessionStore": "onefile", "loopStallMs": 300}
    for how in (["-c"], ["--session", first]):
        with log.open("wb") as err:
            async with start_host("-e", str(plugin), *how, base=base, settings=settings, stderr=err.fileno()) as host:
                state = await host.client.call("get_state")
                assert state["sessionId"] == first and state["messageCount"] == 2
        assert "event loop blocked" not in log.read_text(), (how, log.read_text())
