"""Slash commands registered by plugins (``/name args`` in a prompt)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from atomic_host.tools import resolve

if TYPE_CHECKING:
    from atomic_host.api import ExtensionAPI

CommandHandler = Callable[[str, "ExtensionAPI"], "Awaitable[Any] | Any"]


@dataclass
class SlashCommand:
    """A command a user runs with ``/name args``; the handler gets the raw args and the host API."""

    name: str
    handler: CommandHandler | str
    description: str | None = None
    completions: Callable[[str], list[dict[str, Any]] | None] | str | None = None
    """Optional ``completions(argument_prefix) -> [{value, label, description?}]``."""
    plugin: str = ""
    path: str | None = None

    def get_handler(self) -> CommandHandler:
        self.handler = resolve(self.handler)
        return self.handler  # type: ignore[return-value]
