"""atomic-host: a plugin-based host for the Atomic coding-agent RPC protocol.

The public extension API is what this module exports (the contract of :mod:`atomic_host.contract`);
plugins import nothing else from the host but :mod:`atomic_host.contract` and :mod:`atomic_host.kit`.
Everything is loaded lazily (the hook markers too), so ``import atomic_host`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from atomic_host.contract.lazy_exports import lazy_exports

__version__ = "0.1.0"

_LAZY = {
    # pluggy's markers too: the command imports this package before it pauses the garbage
    # collector for its start (frontends/cli.py), and pluggy, with inspect, is then imported
    # under the pause (~4M instructions less: the collections their objects set off)
    "PROJECT_NAME": "atomic_host.contract.markers",
    "hookimpl": "atomic_host.contract.markers",
    "hookspec": "atomic_host.contract.markers",
    "fail_closed": "atomic_host.contract.markers",
    "Tool": "atomic_host.contract.tools",
    "ToolResult": "atomic_host.contract.tools",
    "ToolContext": "atomic_host.contract.tools",
    "ToolError": "atomic_host.contract.tools",
    "SlashCommand": "atomic_host.contract.commands",
    "ApiImpl": "atomic_host.contract.providers",
    "ProviderInfo": "atomic_host.contract.providers",
    "StreamOptions": "atomic_host.contract.providers",
    "HostAPI": "atomic_host.contract.host",
    "HostError": "atomic_host.contract.errors",
    "ExtensionAPI": "atomic_host.api",  # the runtime's HostAPI implementation; type plugins with HostAPI
    "AgentStartResult": "atomic_host.contract.results",
    "BashResult": "atomic_host.contract.results",
    "Cancel": "atomic_host.contract.results",
    "CompactResult": "atomic_host.contract.results",
    "ContextResult": "atomic_host.contract.results",
    "InputResult": "atomic_host.contract.results",
    "MessageEndResult": "atomic_host.contract.results",
    "ProviderPayload": "atomic_host.contract.results",
    "ToolCallDecision": "atomic_host.contract.results",
    "ToolPatch": "atomic_host.contract.results",
    "AfterProviderResponseEvent": "atomic_host.contract.events",
    "BeforeAgentStartEvent": "atomic_host.contract.events",
    "BeforeProviderHeadersEvent": "atomic_host.contract.events",
    "BeforeProviderRequestEvent": "atomic_host.contract.events",
    "ContextEvent": "atomic_host.contract.events",
    "InputEvent": "atomic_host.contract.events",
    "MessageEndEvent": "atomic_host.contract.events",
    "ModelSelectEvent": "atomic_host.contract.events",
    "ThinkingLevelSelectEvent": "atomic_host.contract.events",
    "SessionBeforeCompactEvent": "atomic_host.contract.events",
    "SessionBeforeForkEvent": "atomic_host.contract.events",
    "SessionBeforeSwitchEvent": "atomic_host.contract.events",
    "SessionCompactEvent": "atomic_host.contract.events",
    "SessionShutdownEvent": "atomic_host.contract.events",
    "SessionStartEvent": "atomic_host.contract.events",
    "SystemPromptEvent": "atomic_host.contract.events",
    "ToolCallEvent": "atomic_host.contract.events",
    "ToolResultEvent": "atomic_host.contract.events",
    "UserBashEvent": "atomic_host.contract.events",
}

__all__ = list(_LAZY)

if TYPE_CHECKING:
    from atomic_host.contract.commands import SlashCommand
    from atomic_host.contract.errors import HostError
    from atomic_host.contract.events import (
        AfterProviderResponseEvent,
        BeforeAgentStartEvent,
        BeforeProviderHeadersEvent,
        BeforeProviderRequestEvent,
        ContextEvent,
        InputEvent,
        MessageEndEvent,
        ModelSelectEvent,
        SessionBeforeCompactEvent,
        SessionBeforeForkEvent,
        SessionBeforeSwitchEvent,
        SessionCompactEvent,
        SessionShutdownEvent,
        SessionStartEvent,
        SystemPromptEvent,
        ThinkingLevelSelectEvent,
        ToolCallEvent,
        ToolResultEvent,
        UserBashEvent,
    )
    from atomic_host.contract.host import HostAPI
    from atomic_host.contract.markers import PROJECT_NAME, fail_closed, hookimpl, hookspec
    from atomic_host.contract.providers import ApiImpl, ProviderInfo, StreamOptions
    from atomic_host.contract.results import (
        AgentStartResult,
        BashResult,
        Cancel,
        CompactResult,
        ContextResult,
        InputResult,
        MessageEndResult,
        ProviderPayload,
        ToolCallDecision,
        ToolPatch,
    )
    from atomic_host.contract.tools import Tool, ToolContext, ToolError, ToolResult

__getattr__ = lazy_exports(__name__, _LAZY)
