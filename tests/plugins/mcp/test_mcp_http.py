"""The streamable HTTP transport, against the fixture server run as an HTTP server on 127.0.0.1:
headers from the configuration reach it, ``$VAR`` expanded, and the credential among them is masked."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
import time
from collections.abc import AsyncIterator

from mcp_helpers import FX_SERVER, call_tool, mcp_errors, text_of, wait_tools

from atomic_host.testing import start_host

TOKEN = "http-token-abcdef0123456789"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def http_server() -> AsyncIterator[int]:
    port = _free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(FX_SERVER), "--http", str(port),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                _reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.returncode is not None:
                    raise RuntimeError("the fixture HTTP server did not start") from None
                await asyncio.sleep(0.1)
        yield port
    finally:
        if proc.returncode is None:
            proc.terminate()
            await asyncio.wait_for(proc.wait(), 10)


async def test_streamable_http_with_headers() -> None:
    async with http_server() as port:
        entry = {
            "type": "http",
            "url": f"http://127.0.0.1:{port}/mcp",
            "headers": {"Authorization": "Bearer ${FX_HTTP_TOKEN}", "X-Fx-Check": "plain-header"},
        }
        async with start_host(settings={"mcpServers": {"web": entry}}, env={"FX_HTTP_TOKEN": TOKEN}) as host:
            c = host.client
            tools = {t["name"] for t in await wait_tools(c, "mcp__web__")}
            assert "mcp__web__headers" in tools
            assert text_of(await call_tool(host, "mcp__web__echo", {"text": "over http"})) == "over http"
            text = text_of(await call_tool(host, "mcp__web__headers", {}))
            assert "check=plain-header" in text
            assert "authorization=[REDACTED" in text and TOKEN not in text
            n0 = len(c.events)
            await c.prompt("/mcp")
            note = await c.wait_for_event(lambda e: e.get("method") == "notify", after=n0, timeout=10)
            assert f"web [http] connected, 11 tools (http://127.0.0.1:{port}/mcp)" in note["message"]
            assert not mcp_errors(c.events)
        assert TOKEN not in "\n".join(c.lines)


async def test_unreachable_http_server_is_reported() -> None:
    entry = {"url": f"http://127.0.0.1:{_free_port()}/mcp", "startupTimeoutMs": 5000}
    async with start_host(settings={"mcpServers": {"gone": entry}}) as host:
        c = host.client
        await c.get_state()
        event = await c.wait_for_event(
            lambda e: e.get("type") == "extension_error" and '"gone"' in e.get("error", ""), timeout=30
        )
        assert event["error"].startswith('MCP server "gone" failed to start:')
