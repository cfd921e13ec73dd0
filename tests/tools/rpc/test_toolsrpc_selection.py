"""``get_tools`` and the tool selection rules (semantics §5.2) through the real host, and the
check that the model is offered exactly the active tools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from atomic_host.testing import Host

EXT = str(Path(__file__).with_name("ext_toolsrpc.py"))
DEFAULTS = ["read", "bash", "kill", "edit", "write", "find", "search", "ask_user_question", "todo"]
EXT_TOOLS = {"ext_echo", "big_result", "ui_probe"}  # weather_lookup is deferred
NOT_REGISTERED = "but no built-in, extension, SDK custom tool, or MCP server has registered a tool named"


def active(report: dict[str, Any]) -> list[str]:
    return [t["name"] for t in report["tools"] if t["active"]]


def by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in report["tools"]}


async def model_tools(host: Host) -> list[str]:
    """Prompt once and return the tool names the provider was given."""
    host.faux.push("ok")
    await host.client.prompt_and_wait("which tools?")
    return [t["name"] for t in host.faux_calls()[-1]["context"]["tools"]]


def check_shape(report: dict[str, Any]) -> None:
    flags = [t["active"] for t in report["tools"]]
    assert flags == sorted(flags, reverse=True), "active tools come first"
    for t in report["tools"]:
        assert set(t) - {"inactiveReason"} == {
            "name",
            "active",
            "exposure",
            "source",
            "sourcePath",
            "summary",
        }
        assert ("inactiveReason" in t) == (not t["active"])
        assert t["summary"] and "\n" not in t["summary"]


async def test_builtin_defaults(rpc_host: Any) -> None:
    async with rpc_host() as host:
        report = await host.client.get_tools()
        check_shape(report)
        assert report["selection"] == {
            "source": "built-in-defaults",
            "description": "the built-in defaults",
            "names": DEFAULTS,
            "modifiers": [],
        }
        assert active(report) == DEFAULTS
        tools = by_name(report)
        assert tools["read"]["source"] == "built-in" and tools["read"]["sourcePath"] == "<builtin:read>"
        assert tools["read"]["exposure"] == "direct"
        assert tools["ls"]["active"] is False
        assert tools["codemode"] == {
            "name": "codemode",
            "active": False,
            "exposure": "model-only",
            "source": 'built-in extension "codemode"',
            "sourcePath": "builtin:codemode",
            "summary": "Run JavaScript that composes tool calls in a fresh QuickJS worker sandbox.",
            "inactiveReason": 'opt-in; add "+codemode" to defaultTools or --tools to enable it',
        }
        assert tools["tool_search"]["exposure"] == "model-only"
        assert tools["tool_search"]["source"] == 'built-in extension "tool-search"'
        assert tools["tool_search"]["sourcePath"] == "builtin:tool-search"
        assert tools["tool_search"]["inactiveReason"] == (
            'opt-in; add "+tool_search" to defaultTools or --tools to enable it'
        )
        assert report["missing"] == [] and report["excluded"] == []
        assert await model_tools(host) == DEFAULTS


async def test_default_tools_setting_spec_example(rpc_host: Any) -> None:
    """The protocol document's example, verbatim: ``"defaultTools": ["+codemode", "+tool-search"]``."""
    async with rpc_host(settings={"defaultTools": ["+codemode", "+tool-search"]}) as host:
        report = await host.client.get_tools()
        check_shape(report)
        assert report["selection"] == {
            "source": "default-tools-setting",
            "description": "the defaultTools setting",
            "names": [*DEFAULTS, "codemode", "tool-search"],
            "modifiers": [],
        }
        tools = by_name(report)
        assert tools["codemode"]["active"] is True
        assert tools["tool_search"]["active"] is False
        assert report["missing"] == [
            {
                "name": "tool-search",
                "reason": "selected by the defaultTools setting, but no built-in, extension, SDK custom "
                'tool, or MCP server has registered a tool named "tool-search"; did you mean "tool_search"?',
            }
        ]
        assert report["excluded"] == []
        assert await model_tools(host) == [*DEFAULTS, "codemode"]


async def test_default_tools_plain_names_and_extensions_stay(rpc_host: Any) -> None:
    async with rpc_host("-e", EXT, settings={"defaultTools": ["read", "ls", "-ls", "+find", "reed"]}) as host:
        report = await host.client.get_tools()
        check_shape(report)
        assert report["selection"]["source"] == "default-tools-setting"
        assert report["selection"]["names"] == ["read", "reed", "find"]
        assert report["selection"]["modifiers"] == []  # only --tools modifiers are listed
        assert set(active(report)) == {"read", "find"} | EXT_TOOLS
        tools = by_name(report)
        assert tools["bash"]["inactiveReason"] == "not selected by the defaultTools setting"
        assert tools["ext_echo"]["sourcePath"] == EXT
        assert tools["big_result"]["source"].startswith("extension ")
        assert tools["big_result"]["sourcePath"] == EXT
        assert tools["weather_lookup"]["active"] is False
        assert tools["weather_lookup"]["inactiveReason"].startswith("deferred")
        assert report["missing"] == [
            {
                "name": "reed",
                "reason": f'selected by the defaultTools setting, {NOT_REGISTERED} "reed"; did you mean "read"?',
            }
        ]
        assert set(await model_tools(host)) == set(active(report))


async def test_default_tools_empty_keeps_extension_tools(rpc_host: Any) -> None:
    async with rpc_host("-e", EXT, settings={"defaultTools": []}) as host:
        report = await host.client.get_tools()
        assert report["selection"]["names"] == []
        assert set(active(report)) == EXT_TOOLS
        assert set(await model_tools(host)) == EXT_TOOLS


async def test_tools_allowlist(rpc_host: Any) -> None:
    async with rpc_host("-e", EXT, "--tools", "read,ext_echo,+ls,nope_tool") as host:
        report = await host.client.get_tools()
        check_shape(report)
        assert report["selection"] == {
            "source": "tools-allowlist",
            "description": "--tools",
            "names": ["read", "ext_echo", "nope_tool", "ls"],
            "modifiers": ["+ls"],
        }
        # The allowlist covers extension tools too.
        assert set(active(report)) == {"read", "ext_echo", "ls"}
        assert by_name(report)["ui_probe"]["inactiveReason"] == "not selected by --tools"
        assert report["missing"] == [
            {"name": "nope_tool", "reason": f'selected by --tools, {NOT_REGISTERED} "nope_tool"'}
        ]
        assert set(await model_tools(host)) == {"read", "ext_echo", "ls"}


async def test_tools_modifiers_only(rpc_host: Any) -> None:
    async with rpc_host("--tools", "+codemode,+tool_search,-bash,-todo") as host:
        report = await host.client.get_tools()
        sel = report["selection"]
        assert sel["source"] == "built-in-defaults"
        assert sel["modifiers"] == ["+codemode", "+tool_search", "-bash", "-todo"]
        expected = [n for n in DEFAULTS if n not in ("bash", "todo")] + ["codemode", "tool_search"]
        assert sel["names"] == expected
        assert set(active(report)) == set(expected)
        assert set(await model_tools(host)) == set(expected)


async def test_no_tools(rpc_host: Any) -> None:
    async with rpc_host("-e", EXT, "--no-tools", "--tools", "read") as host:
        report = await host.client.get_tools()
        check_shape(report)
        assert report["selection"]["source"] == "no-tools"
        assert report["selection"]["names"] == []
        assert active(report) == []
        assert await model_tools(host) == []


async def test_no_builtin_tools_keeps_extension_tools(rpc_host: Any) -> None:
    async with rpc_host("-e", EXT, "--no-builtin-tools") as host:
        report = await host.client.get_tools()
        check_shape(report)
        assert report["selection"]["source"] == "no-built-in-tools"
        assert report["selection"]["description"] == "--no-builtin-tools"
        assert set(active(report)) == EXT_TOOLS
        assert by_name(report)["read"]["inactiveReason"] == "not selected by --no-builtin-tools"
        assert set(await model_tools(host)) == EXT_TOOLS


async def test_exclude_tools_applied_last(rpc_host: Any) -> None:
    async with rpc_host("-e", EXT, "--tools", "+ls", "--exclude-tools", "bash,ls,ext_echo") as host:
        report = await host.client.get_tools()
        check_shape(report)
        assert {e["name"] for e in report["excluded"]} == {"bash", "ls", "ext_echo"}
        for entry in report["excluded"]:
            assert entry["reason"] == "excluded by --exclude-tools"
        tools = by_name(report)
        for name in ("bash", "ls", "ext_echo"):
            assert tools[name]["active"] is False, name
        assert tools["bash"]["inactiveReason"] == "excluded by --exclude-tools"
        seen = await model_tools(host)
        assert "bash" not in seen and "ls" not in seen and "ext_echo" not in seen
        assert set(seen) == set(active(report))
