"""Start the real host with this plugin installed and exercise its tool and command."""

pytest_plugins = ["atomic_host.testing"]

TOOL = "{{ cookiecutter.__underscored }}_echo"


async def test_tool_called_by_the_model(host_factory):
    async with host_factory() as host:
        host.faux.tool_call(TOOL, {"text": "hi", "times": 2})
        host.faux.push("done")
        events = await host.client.prompt_and_wait("echo hi twice")
        end = next(e for e in events if e["type"] == "tool_execution_end")
        assert end["toolName"] == TOOL
        assert end["isError"] is False
        assert end["result"]["content"] == [{"type": "text", "text": "hi hi"}]
        assert (await host.client.get_last_assistant_text()).text == "done"


async def test_invalid_arguments_become_an_error_result(host_factory):
    async with host_factory() as host:
        host.faux.tool_call(TOOL, {"text": "hi", "times": 99})
        host.faux.push("ok")
        events = await host.client.prompt_and_wait("go")
        end = next(e for e in events if e["type"] == "tool_execution_end")
        assert end["isError"] is True


async def test_slash_command(host_factory):
    async with host_factory() as host:
        start = len(host.client.events)
        data = await host.client.prompt("/{{ cookiecutter.__hyphenated }} some args")
        assert data["disposition"] == "handled"
        event = await host.client.wait_for_event("entry_appended", after=start)
        assert event["entry"]["customType"] == "{{ cookiecutter.__underscored }}"
        assert event["entry"]["data"] == {"args": "some args"}
        commands = {c.name for c in (await host.client.get_commands()).commands}
        assert "{{ cookiecutter.__hyphenated }}" in commands
