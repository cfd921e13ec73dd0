"""A real MCP server for the tests, written with the ``mcp`` package's own server class
(``MCPServer`` in mcp 2.x, ``FastMCP`` in 1.x). Run as a stdio server by the host under test:

    python mcpfx_server.py [--http PORT]

``MCPFX_PID_FILE``: append this process's pid to that file at start (the tests check that no
server outlives the host). ``MCPFX_LOG``: append one line per tool call.
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys
import time

try:
    from mcp.server.mcpserver import Context, Image, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    V2 = True
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import Context, Image  # type: ignore[no-redef]
    from mcp.server.fastmcp import FastMCP as MCPServer  # type: ignore[no-redef]
    from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef]

    V2 = False

# A 1x1 transparent PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

server = MCPServer("mcpfx")


def _log(line: str) -> None:
    path = os.environ.get("MCPFX_LOG")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    _log(f"echo {text}")
    return text


@server.tool()
def fail(message: str) -> str:
    """Always fails with the message."""
    raise ToolError(message)


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    _log(f"slow start {seconds}")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        _log("slow cancelled")
        raise
    _log("slow done")
    return f"slept {seconds}"


@server.tool()
def pixel() -> Image:
    """A tiny image."""
    return Image(data=PIXEL, format="png")


@server.tool()
def weather(city: str) -> dict[str, object]:
    """Structured weather report."""
    return {"city": city, "temperature": 21.5, "conditions": "sunny"}


@server.tool()
def getenv(name: str) -> str:
    """The value of an environment variable of this server, or '(unset)'."""
    return os.environ.get(name, "(unset)")


@server.tool()
def headers(ctx: Context) -> str:
    """The Authorization and X-Fx-Check headers of this request (HTTP transport)."""
    request = getattr(ctx.request_context, "request", None)
    got = getattr(request, "headers", None) or {}
    return f"authorization={got.get('authorization', '(none)')} check={got.get('x-fx-check', '(none)')}"


@server.tool()
def pid() -> str:
    """This server's process id."""
    return str(os.getpid())


@server.tool()
def crash() -> str:
    """Exit the process mid-call."""
    print("mcpfx: crashing on purpose", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
async def hang() -> str:
    """Block the whole server (a synchronous sleep on its event loop) for a minute."""
    time.sleep(60)
    return "woke up"


def extra() -> str:
    """A tool that exists only after grow() was called."""
    return "extra tool here"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool 'extra' and tell the client that the tool list changed."""
    server.add_tool(extra)
    await ctx.session.send_tool_list_changed()
    return "grown"


if __name__ == "__main__":
    pid_file = os.environ.get("MCPFX_PID_FILE")
    if pid_file:
        with open(pid_file, "a") as f:
            f.write(f"{os.getpid()}\n")
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        port = int(sys.argv[2])
        if V2:
            server.run(transport="streamable-http", host="127.0.0.1", port=port)
        else:  # mcp 1.x: FastMCP takes host and port as settings
            server.settings.host, server.settings.port = "127.0.0.1", port  # type: ignore[attr-defined]
            server.run(transport="streamable-http")
    else:
        server.run()
