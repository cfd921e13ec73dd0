"""codemode and tool_search switched on through selection and driven by the faux provider."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from atomic_host.testing import Host, read_jsonl

EXT = str(Path(__file__).with_name("ext_toolsrpc.py"))


def tool_end(host: Host, call_id: str) -> dict[str, Any]:
    ends = [e for e in host.client.events if e.get("type") == "tool_execution_end" and e["toolCallId"] == call_id]
    assert len(ends) == 1, ends
    return ends[0]


def result_text(end: dict[str, Any]) -> str:
    return "\n".join(b["text"] for b in end["result"]["content"] if b["type"] == "text")


def call(name: str, call_id: str, **arguments: Any) -> dict[str, Any]:
    return {"content": [{"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}]}


async def test_codemode_reads_a_file_through_the_host_and_hooks_see_it(rpc_host: Any, tmp_path: Path) -> None:
    log = tmp_path / "hook-log.jsonl"
    async with rpc_host("-e", EXT, "--tools", "+codemode,+tool_search", env={"TOOLSRPC_LOG": str(log)}) as host:
        (host.cwd / "data.txt").write_text("alpha\nbeta\n")
        (host.cwd / "forbidden.txt").write_text("top secret\n")
        code = (
            'const ok = await tools.read({path: "data.txt"});\n'
            'const blocked = await tools.read({path: "forbidden.txt"});\n'
            "return JSON.stringify({ok: ok.text, okError: ok.isError, "
            "blocked: blocked.text, blockedError: blocked.isError});"
        )
        host.faux.push(call("codemode", "cm-1", code=code), "done")
        await host.client.prompt_and_wait("use codemode")
        end = tool_end(host, "cm-1")
        assert end["isError"] is False, end
        text = result_text(end)
        value = json.loads(text[text.index("{") :])
        assert "alpha" in value["ok"] and "beta" in value["ok"] and value["okError"] is False
        assert value["blockedError"] is True
        assert value["blocked"] == "reading forbidden files is blocked by ext_toolsrpc"
        assert "top secret" not in text
        # The extension's tool_call hook saw the outer call and both nested ones.
        seen = read_jsonl(log)
        assert [s["tool"] for s in seen] == ["codemode", "read", "read"]
        assert [s["input"]["path"] for s in seen[1:]] == ["data.txt", "forbidden.txt"]
        assert end["result"]["details"]["toolCalls"] == [
            {"name": "read", "isError": False},
            {"name": "read", "isError": True},
        ]
        # The model got the codemode result back on its next call.
        last = host.faux_calls()[-1]["context"]["messages"][-1]
        assert last["role"] == "toolResult" and last["toolCallId"] == "cm-1"


async def test_codemode_cannot_call_model_only_tools(rpc_host: Any) -> None:
    async with rpc_host("--tools", "+codemode,+tool_search") as host:
        code = "const r = await tools.tool_search({query: 'weather'}); return r.isError + ':' + r.text;"
        host.faux.push(call("codemode", "cm-2", code=code), "done")
        await host.client.prompt_and_wait("try it")
        end = tool_end(host, "cm-2")
        text = result_text(end)
        assert end["isError"] is True
        assert 'Unknown tool "tool_search". Callable tools: ' in text
        callable_tools = text.split("Callable tools: ", 1)[1].split("\n", 1)[0].split(", ")
        assert "read" in callable_tools
        assert "codemode" not in callable_tools and "tool_search" not in callable_tools


async def test_tool_search_loads_a_deferred_extension_tool(rpc_host: Any) -> None:
    async with rpc_host("-e", EXT, settings={"defaultTools": ["+tool_search"]}) as host:
        c = host.client
        report = await c.get_tools()
        tools = {t["name"]: t for t in report["tools"]}
        assert tools["tool_search"]["active"] is True
        assert tools["weather_lookup"]["active"] is False
        host.faux.push(
            call("tool_search", "ts-1", query="weather forecast city"),
            call("weather_lookup", "wl-1", city="Oslo"),
            "It is sunny.",
        )
        await c.prompt_and_wait("what's the weather in Oslo?")
        calls = host.faux_calls()
        names = [[t["name"] for t in call_["context"]["tools"]] for call_ in calls]
        assert "weather_lookup" not in names[0]  # hidden until searched
        assert "tool_search" in names[0]
        assert "weather_lookup" in names[1] and "weather_lookup" in names[2]  # from the next call on
        assert "weather_lookup" in result_text(tool_end(host, "ts-1"))
        end = tool_end(host, "wl-1")
        assert end["isError"] is False and result_text(end) == "Sunny in Oslo"
        report = await c.get_tools()
        assert {t["name"]: t for t in report["tools"]}["weather_lookup"]["active"] is True


async def test_deferred_tool_cannot_be_called_before_loading(rpc_host: Any) -> None:
    async with rpc_host("-e", EXT, settings={"defaultTools": ["+tool_search"]}) as host:
        host.faux.push(call("weather_lookup", "early", city="Oslo"), "ok")
        await host.client.prompt_and_wait("go")
        end = tool_end(host, "early")
        assert end["isError"] is True and result_text(end) == "Tool weather_lookup not found"
