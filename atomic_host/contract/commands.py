"""Slash commands registered by plugins (``/name args`` in a prompt)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from atomic_host.contract.records import record
from atomic_host.contract.tools import resolve

if TYPE_CHECKING:
    from atomic_host.contract.host import HostAPI

CommandHandler = Callable[[str, "HostAPI"], "Awaitable[Any] | Any"]


@record
class SlashCommand:
    """A command a user runs with ``/name args``.

    An *extension* command has a ``handler(args, api)``: it runs at once, even while the agent
    streams, and the prompt is ``handled``. A prompt template or skill has an ``expand(args) ->
    str`` instead: the prompt's text is replaced by the expansion and then sent (or queued) as
    usual.
    """

    name: str
    handler: CommandHandler | str | None = None
    description: str | None = None
    completions: Callable[[str], list[dict[str, Any]] | None] | str | None = None
    """Optional ``completions(argument_prefix) -> [{value, label, description?}]``."""
    plugin: str = ""
    path: str | None = None
    source: str = "extension"
    """extension | prompt | skill (``get_commands``)."""
    location: str | None = None
    """user | project | path, for prompt templates and skills."""
    expand: Callable[[str], str] | str | None = None

    @property
    def is_expansion(self) -> bool:
        return self.expand is not None

    def get_handler(self) -> CommandHandler:
        self.handler = resolve(self.handler)
        return self.handler  # type: ignore[return-value]

    def get_expander(self) -> Callable[[str], str]:
        self.expand = resolve(self.expand)
        return self.expand  # type: ignore[return-value]
