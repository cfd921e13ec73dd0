"""atomic-host: a plugin-based host for the Atomic coding-agent RPC protocol.

The public extension API is what this module exports; plugins import nothing else from the
host. Heavy objects are loaded lazily so ``import atomic_host`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

PROJECT_NAME = "atomic_host"
"""pluggy project name, marker name and entry-point group."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

__version__ = "0.1.0"

_LAZY = {
    "Tool": "atomic_host.tools",
    "ToolResult": "atomic_host.tools",
    "ToolContext": "atomic_host.tools",
    "ToolError": "atomic_host.tools",
    "SlashCommand": "atomic_host.commands",
    "ApiImpl": "atomic_host.llm.types",
    "ProviderInfo": "atomic_host.llm.types",
    "StreamOptions": "atomic_host.llm.types",
    "ExtensionAPI": "atomic_host.api",
    "InputResult": "atomic_host.api",
    "ToolCallDecision": "atomic_host.api",
    "Cancel": "atomic_host.api",
}

__all__ = [
    "PROJECT_NAME",
    "ApiImpl",
    "Cancel",
    "ExtensionAPI",
    "InputResult",
    "ProviderInfo",
    "SlashCommand",
    "StreamOptions",
    "Tool",
    "ToolCallDecision",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "hookimpl",
    "hookspec",
]

if TYPE_CHECKING:
    from atomic_host.api import Cancel, ExtensionAPI, InputResult, ToolCallDecision
    from atomic_host.commands import SlashCommand
    from atomic_host.llm.types import ApiImpl, ProviderInfo, StreamOptions
    from atomic_host.tools import Tool, ToolContext, ToolError, ToolResult


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'atomic_host' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
