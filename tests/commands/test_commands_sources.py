"""``get_commands`` items say whether their arguments complete and where they came from
(``hasArgumentCompletions``, ``sourceInfo``); ``get_state`` lists the names two extensions claimed
(``resourceOverlaps``). (``compactionReason``: tests/compaction/test_compaction_mid_turn.py.)"""

from __future__ import annotations

from pathlib import Path

from atomic_host.testing import start_host

HELLO_PLUGIN = Path(__file__).parents[1] / "plugins" / "hello_cmd.py"

TWIN = '''"""Claims the names hello_cmd.py already has, and one command that completes its arguments."""

from atomic_host import hookimpl
from atomic_host.contract.commands import SlashCommand
from atomic_host.contract.tools import Tool, ToolResult


def _run(args, api):
    return None


async def _tool(params, ctx):
    return ToolResult.text("twin")


@hookimpl
def register_commands(register):
    register(SlashCommand("hello", _run, description="another hello"))
    register(SlashCommand("pick", _run, description="pick one", completions=lambda prefix: [
        {"value": v, "label": v} for v in ("alpha", "beta") if v.startswith(prefix)]))


@hookimpl
def register_tools(register):
    register(Tool("hello_tool", "Another hello.", {"type": "object", "properties": {}}, _tool))
'''


async def test_sources_completions_and_overlaps(tmp_path: Path) -> None:
    twin = tmp_path / "twin.py"
    twin.write_text(TWIN)
    async with start_host("-e", str(HELLO_PLUGIN), "-e", str(twin), base=tmp_path / "host") as host:
        c = host.client
        commands = {x["name"]: x for x in (await c.call("get_commands"))["commands"]}
        assert commands["pick"]["hasArgumentCompletions"] is True
        assert commands["hello"]["hasArgumentCompletions"] is False
        assert (await c.call("get_command_completions", commandName="pick", argumentPrefix="b")) == {
            "completions": [{"value": "beta", "label": "beta"}]
        }
        assert commands["hello"]["sourceInfo"]["path"] == str(HELLO_PLUGIN)
        assert commands["hello:1"]["sourceInfo"]["path"] == str(twin)  # renamed: hello was taken
        state = await c.get_state()
        overlaps = {(o["resourceType"], o["name"]): o for o in state["resourceOverlaps"]}
        assert set(overlaps) == {("tool", "hello_tool"), ("command", "hello")}
        for overlap in overlaps.values():
            assert overlap["bundled"]["path"] == str(HELLO_PLUGIN)  # the first one keeps the name
            assert overlap["inherited"]["path"] == str(twin)
            assert overlap["inherited"]["scope"] == "temporary" and overlap["inherited"]["source"] == "local"
        assert "compactionReason" not in state
        host.assert_protocol_lines()
