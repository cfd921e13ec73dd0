"""A plugin cannot end the host over RPC (issue 23): ``sys.exit()``, ``raise SystemExit``,
``KeyboardInterrupt``, ``GeneratorExit`` and ``os._exit()`` (called through a library function) in a
tool handler, the ``tool_call`` gate, the ``input`` and ``on_event`` hooks, lifecycle hooks, a
registration hook, a slash command and its completions, a provider's stream and an extension's
import: each is that plugin's error, the host answers the next command and exits 0 on EOF.
Before the fix the host died with the plugin's status (3, 4, -SIGINT) and ``prompt_and_wait``
saw the pipe close."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_helpers import of_type, text_of
from px_helper import HOWS, TEXTS, errors, ext, px_call, report

from atomic_host.testing import start_host


async def _serving(host) -> None:
    """The host still answers and still runs a prompt to its end."""
    assert (await host.client.get_state())["isStreaming"] is False
    host.faux.push("still here")
    events = await host.client.prompt_and_wait("are you there?", timeout=20)
    assert text_of(of_type(events, "message_end")[-1]["message"]) == "still here"


@pytest.mark.parametrize("how", HOWS)
async def test_exits_during_a_session_are_the_plugins_errors(how: str, tmp_path: Path) -> None:
    px = ext("px_exits")
    log = tmp_path / "stderr.txt"
    with log.open("wb") as err:
        async with start_host("-e", px, env={"PX_HOW": how}, stderr=err.fileno()) as host:
            c = host.client

            # the tool handler: the tool's error result
            host.faux.push(px_call("tool"), "after the tool")
            events = await c.prompt_and_wait("call it", timeout=20)
            end = of_type(events, "tool_execution_end")[0]
            assert end["isError"] is True and end["result"]["content"][0]["text"] == TEXTS[how]
            assert text_of(of_type(events, "message_end")[-1]["message"]) == "after the tool"

            # the tool_call gate: reported, no opinion (fails open by default), the tool runs
            n0 = len(c.events)
            host.faux.push(px_call("gate"), "after the gate")
            events = await c.prompt_and_wait("gate it", timeout=20)
            assert of_type(events, "tool_execution_end")[0]["result"]["content"][0]["text"] == "px_tool ran"
            assert errors(host, n0) == [(px, "tool_call", report(how, "_px_how"))]

            # input and on_event hooks: reported, the prompt goes on
            for hook in ("input", "on_event"):
                n0 = len(c.events)
                host.faux.push(f"answer after {hook}")
                events = await c.prompt_and_wait(f"fail:{hook}", timeout=20)
                assert text_of(of_type(events, "message_end")[-1]["message"]) == f"answer after {hook}"
                assert errors(host, n0) == [(px, hook, report(how, "_px_how"))]

            # a slash command and its completions: the command's error, the prompt handled
            n0 = len(c.events)
            assert (await c.call("prompt", message="/px now"))["disposition"] == "handled"
            assert (await c.call("get_command_completions", commandName="px", argumentPrefix=""))["completions"] is None
            assert errors(host, n0) == [
                ("command:px", "command", report(how, "_px_how")),
                (px, "get_command_completions", report(how, "_px_how")),
            ]

            # a provider plugin's stream: the message ends with the provider's error
            await c.set_model("pxexit", "boom")
            events = await c.prompt_and_wait("stream", timeout=20)
            final = of_type(events, "message_end")[-1]["message"]
            assert final["stopReason"] == "error" and final["errorMessage"] == f"Provider error: {TEXTS[how]}"
            await c.set_model("faux", "faux-1")

            await _serving(host)
        assert c.exit_code == 0
    host.assert_protocol_lines()
    if how == "os._exit":  # the guard names the caller
        assert f"os._exit(4) called at {ext('_px_how')}:" in log.read_text()


@pytest.mark.parametrize("how", HOWS)
async def test_exits_at_start_are_the_plugins_errors(how: str) -> None:
    """At import, in a registration hook (the plugin is then failed and what it registered is
    gone), in host_start and session_start."""
    px, at_import, at_register = ext("px_exits"), ext("px_at_import"), ext("px_at_register")
    args = ("-e", px, "-e", at_import, "-e", at_register)
    async with start_host(*args, env={"PX_HOW": how, "PX_AT": "host_start,session_start"}) as host:
        c = host.client
        await _serving(host)
        assert sorted(errors(host)) == sorted(
            [
                (at_import, "import", report(how, "_px_how")),
                (at_register, "register_commands", report(how, "_px_how")),
                (px, "session_start", report(how, "_px_how")),
                (px, "host_start", report(how, "_px_how")),
            ]
        )
        names = [x["name"] for x in (await c.get_commands()).commands]
        assert "px" in names and "px_half" not in names  # the failed plugin's command is gone
    assert c.exit_code == 0
    host.assert_protocol_lines()
