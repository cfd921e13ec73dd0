"""MCP servers as tools: each tool of a configured Model Context Protocol server becomes the host
tool ``mcp__<server>__<tool>`` (docs/mcp.md).

Startup cost without servers: reading two small JSON files. With servers, the ``mcp`` package is
imported and the servers are connected in a thread of their own after the host has started
(:mod:`builtin_plugins.mcp.hub`), so the first response is never delayed; their tools register as
they connect, and a model request made before they all did waits for them (the ``context``
hook). ``/mcp`` (registered when a server is configured) lists the servers, their state and their
tools.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from atomic_host import SlashCommand, hookimpl

if TYPE_CHECKING:
    from atomic_host import HostAPI, Tool
    from atomic_host.contract.events import ContextEvent
    from builtin_plugins.mcp.config import ServerConfig
    from builtin_plugins.mcp.hub import Hub


class _State:
    def __init__(self, servers: dict[str, ServerConfig], register: Callable[[Tool], None]) -> None:
        self.servers = servers
        self.register = register
        self.hub: Hub | None = None


_hosts: weakref.WeakKeyDictionary[Any, _State] = weakref.WeakKeyDictionary()
"""Per host (its ``api``): the configured servers, the tool registrar and, once started, the hub."""


@hookimpl
def register_tools(register: Callable[[Tool], None], api: HostAPI) -> None:
    # No tools yet: they are known once a server answers. The registrar is kept for then.
    from builtin_plugins.mcp.config import load_servers

    servers = load_servers(api.agent_dir, api.cwd, api.trusted, api.settings)
    _hosts[api] = _State(servers, register)


@hookimpl
def register_commands(register: Callable[[SlashCommand], None], api: HostAPI) -> None:
    # Only with servers configured: without MCP the plugin adds nothing a user or client sees.
    state = _hosts.get(api)
    if state is None or not state.servers:
        return

    register(
        SlashCommand(
            "mcp",
            handler=mcp_command,
            description="MCP servers: their state and tools (/mcp restart <server>)",
            completions=_completions(api),
        )
    )


@hookimpl
async def host_start(api: HostAPI) -> None:
    state = _hosts.get(api)
    if state is None or not state.servers:
        return
    # the mcp extra: the hub (and the MCP SDK through it) only when servers are configured
    from builtin_plugins.mcp.hub import Hub

    state.hub = Hub(api, state.servers, state.register)
    state.hub.start()
    if getattr(api.options, "mode", "rpc") != "rpc":
        # One prompt, no client to ask get_tools later: the servers' tools must be there for it.
        await state.hub.wait_settled()


@hookimpl
async def context(event: ContextEvent, api: HostAPI) -> None:
    # A model request while configured servers are still starting (a prompt sent right after the
    # host started) waits for them: their tools must be in it. Without servers: nothing at all.
    state = _hosts.get(api)
    if state is None or state.hub is None or state.hub.settled.is_set():
        return
    hook_ms = api.settings.get("hookTimeoutMs", 30000)
    limit = hook_ms / 1000 - 1 if isinstance(hook_ms, int | float) and hook_ms > 0 else None
    await state.hub.wait_ready(event.signal, limit)


@hookimpl
async def host_shutdown(api: HostAPI) -> None:
    state = _hosts.get(api)
    if state is not None and state.hub is not None:
        await state.hub.stop()


@hookimpl
def plugin_unload(api: HostAPI) -> None:
    _hosts.pop(api, None)


def _completions(api: HostAPI) -> Callable[[str], list[dict[str, Any]] | None]:
    def complete(prefix: str) -> list[dict[str, Any]] | None:
        state = _hosts.get(api)
        names = list(state.servers) if state else []
        options = [f"restart {n}" for n in names]
        return [{"value": o, "label": o} for o in options if o.startswith(prefix)] or None

    return complete


def status_lines(api: HostAPI) -> list[str]:
    """What ``/mcp`` shows: one line per server, then its tools."""
    state = _hosts.get(api)
    if state is None or not state.servers:
        return [
            "No MCP servers configured. Add mcpServers to settings.json, or to mcp.json in the agent dir "
            "or .mcp.json in a trusted project (docs/mcp.md)."
        ]
    lines = []
    for name, cfg in state.servers.items():
        status = state.hub.status.get(name, {}) if state.hub else {"state": "failed" if cfg.error else "pending"}
        tools = status.get("tools", [])
        where = cfg.command if cfg.transport == "stdio" else cfg.url.split("?", 1)[0]
        line = f"{name} [{cfg.transport}] {status.get('state', 'pending')}, {len(tools)} tools ({where})"
        error = status.get("error") or cfg.error
        if error and status.get("state") != "connected":
            line += f": {error}"
        lines.append(line)
        lines += [f"  {t}" for t in tools]
    return lines


async def mcp_command(args: str, api: HostAPI) -> None:
    words = args.split()
    if words[:1] == ["restart"] and len(words) == 2:
        state = _hosts.get(api)
        if state is None or state.hub is None or words[1] not in state.servers:
            api.ui.notify(f'No MCP server "{words[1]}"', "error")
            return
        try:
            await state.hub.restart(words[1])
        except Exception as exc:
            api.ui.notify(str(exc), "error")
            return
    elif words:
        api.ui.notify("Usage: /mcp, or /mcp restart <server>", "error")
        return
    api.ui.notify("\n".join(status_lines(api)), "info")
