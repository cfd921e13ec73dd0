"""Startup stays where it was: with no server configured, the ``mcp`` package (and the plugin's
modules that use it) is never imported; with servers, they connect in the background and the first
response does not wait for them."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from mcp_helpers import HERE, call_tool, fx_entry, text_of, wait_tools

from atomic_host.testing import start_host

PROBE = str(HERE / "mcpfx_probe.py")


async def _modules(host: object) -> dict[str, bool]:
    return json.loads(text_of(await call_tool(host, "probe_modules", {})))


async def test_no_servers_no_mcp_import(tmp_path: Path) -> None:
    # Even an untrusted project's .mcp.json is not a reason to import anything.
    cwd = tmp_path / "proj"
    cwd.mkdir()
    (cwd / ".mcp.json").write_text(json.dumps({"mcpServers": {"fx": fx_entry()}}))
    async with start_host("-e", PROBE, cwd=cwd) as host:
        c = host.client
        await c.get_state()
        await c.get_tools()
        seen = await _modules(host)
        assert not any(seen.values()), seen
        assert not [t for t in (await c.get_tools())["tools"] if t["name"].startswith("mcp__")]
        commands = [x["name"] for x in (await c.call("get_commands"))["commands"]]
        assert "mcp" not in commands  # without servers the plugin adds nothing visible


async def test_servers_connect_in_the_background(tmp_path: Path) -> None:
    timings = {}
    for label, settings in (("none", {}), ("fx", {"mcpServers": {"fx": fx_entry()}})):
        t0 = time.monotonic()
        async with start_host("-e", PROBE, settings=settings) as host:
            await host.client.get_state()
            timings[label] = time.monotonic() - t0
            if label == "fx":
                await wait_tools(host.client, "mcp__fx__")
                timings["tools"] = time.monotonic() - t0
                seen = await _modules(host)
                assert seen["mcp"] and seen["builtin_plugins.mcp.client"], seen
    print(
        f"first get_state: no servers {timings['none']:.2f} s, one server {timings['fx']:.2f} s; "
        f"its tools listed after {timings['tools']:.2f} s",
        file=sys.stderr,
    )
    # Connecting takes seconds (two Python processes import the SDK); the first answer does not wait.
    assert timings["fx"] < timings["none"] + 1.0, timings
    assert timings["tools"] > timings["fx"]
