"""Configuration (sources, precedence, trust, ``$VAR``), tool names and result mapping, in process."""

from __future__ import annotations

import json
from pathlib import Path

from builtin_plugins.mcp.config import MAX_TOOL_NAME, load_servers, tool_name
from builtin_plugins.mcp.results import to_content


def _write(path: Path, servers: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}))


def test_sources_precedence_and_trust(tmp_path: Path) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "proj"
    _write(agent / "mcp.json", {"a": {"command": "from-agent"}, "b": {"command": "from-agent"}})
    _write(cwd / ".mcp.json", {"b": {"command": "from-project"}, "c": {"url": "http://127.0.0.1:1/mcp"}})
    settings = {"mcpServers": {"a": {"command": "from-settings"}, "off": {"command": "x", "disabled": True}}}
    trusted = load_servers(str(agent), str(cwd), True, settings, environ={})
    assert {n: s.command or s.url for n, s in trusted.items()} == {
        "a": "from-settings",
        "b": "from-project",
        "c": "http://127.0.0.1:1/mcp",
    }
    assert trusted["c"].transport == "http" and trusted["b"].source == str(cwd / ".mcp.json")
    untrusted = load_servers(str(agent), str(cwd), False, settings, environ={})
    assert {n: s.command for n, s in untrusted.items()} == {"a": "from-settings", "b": "from-agent"}


def test_entries_env_expansion_and_errors(tmp_path: Path) -> None:
    environ = {"TOKEN": "tok-1234567890", "HOME": "/home/me"}
    settings = {
        "mcp": {"toolTimeoutMs": 1500},
        "mcpServers": {
            "s": {
                "command": "srv",
                "args": ["--root", "$HOME/x", 3],
                "env": {"API_KEY": "${TOKEN}", "MODE": "${MODE:-fast}", "TZ": "Europe/Paris"},
                "startupTimeoutMs": 2000,
            },
            "r": {"type": "sse", "url": "https://example.invalid/sse", "headers": {"Authorization": "Bearer $TOKEN"}},
            "missing": {"command": "srv", "env": {"K": "$NOPE"}},
            "bad": {"command": ""},
            "weird": {"type": "carrier-pigeon", "url": "http://x"},
            "empty": {},
        },
    }
    servers = load_servers(str(tmp_path), str(tmp_path), False, settings, environ=environ)
    s = servers["s"]
    assert s.args == ["--root", "/home/me/x", "3"] and s.env == {
        "API_KEY": "tok-1234567890",
        "MODE": "fast",
        "TZ": "Europe/Paris",
    }
    assert s.startup_timeout_s == 2.0 and s.tool_timeout_s == 1.5 and s.error is None
    assert [label for label, _ in s.secret_values()] == ["mcp:s:API_KEY"]  # TZ is no credential
    r = servers["r"]
    assert r.transport == "sse" and r.headers == {"Authorization": "Bearer tok-1234567890"}
    assert r.secret_values() == [("mcp:r:Authorization", "Bearer tok-1234567890")]
    q = load_servers(
        str(tmp_path),
        str(tmp_path),
        False,
        {"mcpServers": {"q": {"url": "https://h/mcp?api_key=$TOKEN&v=2"}}},
        environ=environ,
    )["q"]
    assert q.secret_values() == [("mcp:q:api_key", "tok-1234567890")]
    assert servers["missing"].error == "env.K: environment variable NOPE is not set"
    assert servers["bad"].error == "command must be a non-empty string"
    assert "unknown transport type 'carrier-pigeon'" in (servers["weird"].error or "")
    assert servers["empty"].error == 'needs "command" (stdio) or "url" (http, sse)'
    # Errors never carry a value: only names.
    assert "tok-" not in " ".join(str(x.error) for x in servers.values())


def test_tool_names() -> None:
    assert tool_name("time", "get_current_time") == "mcp__time__get_current_time"
    assert tool_name("my.server", "do it/now") == "mcp__my_server__do_it_now"
    long = tool_name("s" * 40, "t" * 40)
    assert len(long) == MAX_TOOL_NAME and long != tool_name("s" * 40, "t" * 39 + "u")


def test_results_mapping() -> None:
    blocks, details, err = to_content(
        {
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt"},
                {"type": "resource", "resource": {"uri": "file:///b.txt", "mimeType": "text/plain", "text": "B"}},
                {"type": "resource", "resource": {"uri": "file:///c.png", "mimeType": "image/png", "blob": "AAAA"}},
                {"type": "resource", "resource": {"uri": "file:///d.bin", "blob": "AAAA"}},
            ],
            "structuredContent": {"x": 1},
            "isError": False,
        }
    )
    assert not err and details == {"structuredContent": {"x": 1}}
    assert blocks[0] == {"type": "text", "text": "hi"}
    assert blocks[1] == {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    assert blocks[2] == {"type": "text", "text": "[audio audio/wav, 3 bytes, not shown]"}
    assert blocks[3]["text"].startswith("Resource link: file:///a.txt")
    assert blocks[4] == {"type": "text", "text": "Resource file:///b.txt (text/plain):\nB"}
    assert blocks[5] == {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    assert blocks[6]["text"] == "[resource file:///d.bin (binary), 3 bytes]"
    blocks, details, err = to_content({"content": [], "structuredContent": {"y": [1]}})
    assert json.loads(blocks[0]["text"]) == {"y": [1]}
    blocks, _details, err = to_content({"content": [], "isError": True})
    assert err and "error" in blocks[0]["text"]
