"""Tables of what plugins contributed: tools and slash commands, with their owners.

Tool names are unique and loud about it: built-in names are reserved and a duplicate is skipped
with an error naming both plugins. Command names get ``:1``, ``:2`` suffixes (as upstream). Both
keep each such collision as an :class:`Overlap` (``get_state.resourceOverlaps``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from atomic_host.contract.commands import SlashCommand
    from atomic_host.contract.tools import Tool

Reporter = Callable[[str, str, str], None]


class Owner(NamedTuple):
    """Who contributed a resource: the plugin, its path, and the resource's own file and location."""

    plugin: str
    path: str | None
    location: str | None = None


class Overlap(NamedTuple):
    """Two contributions of one name: ``kept`` holds it, ``other`` was skipped (a tool) or
    renamed with a ``:N`` suffix (a command)."""

    kind: str
    """tool | command | prompt"""
    name: str
    kept: Owner
    other: Owner


class ToolRegistry:
    """Every registered tool plus the active selection and tools loaded by tool_search."""

    def __init__(self, report: Reporter) -> None:
        self.tools: dict[str, Tool] = {}
        self.report = report
        self.overlaps: list[Overlap] = []
        """Duplicate names that were skipped, with both owners."""
        self.selection: set[str] | None = None
        """Names selected by settings/CLI (computed by :mod:`atomic_host.plugins.selection`)."""
        self.loaded_deferred: set[str] = set()
        self.builtin: set[str] = set()
        """Names of the tools registered by built-in plugins (``PluginRecord.source == "builtin"``)."""

    def add(self, tool: Tool, plugin: str, plugin_path: str, *, builtin: bool = False) -> None:
        existing = self.tools.get(tool.name)
        if existing is not None and existing.plugin != plugin:
            self.report(
                plugin_path,
                "register_tools",
                f'Tool "{tool.name}" is already registered by {existing.plugin}; '
                f"the one from {plugin} was skipped",
            )
            kept = Owner(existing.plugin, existing.source_path)
            self.overlaps.append(Overlap("tool", tool.name, kept, Owner(plugin, tool.source_path or plugin_path)))
            return
        tool.plugin = plugin
        if builtin:
            self.builtin.add(tool.name)
        else:
            self.builtin.discard(tool.name)
            if tool.source == "built-in":
                tool.source = f'extension "{plugin}"'
                tool.source_path = tool.source_path or plugin_path
        self.tools[tool.name] = tool

    def is_builtin(self, tool: Tool) -> bool:
        return tool.name in self.builtin and self.tools.get(tool.name) is tool

    def remove(self, name: str) -> None:
        self.tools.pop(name, None)
        self.builtin.discard(name)
        self.loaded_deferred.discard(name)

    def remove_plugin(self, plugin: str) -> None:
        for name in [n for n, t in self.tools.items() if t.plugin == plugin]:
            del self.tools[name]
            self.builtin.discard(name)
        self.overlaps = [o for o in self.overlaps if plugin not in (o.kept.plugin, o.other.plugin)]

    def all(self) -> Iterable[Tool]:
        return self.tools.values()

    def get(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def is_active(self, tool: Tool) -> bool:
        if self.selection is None:
            return not tool.opt_in
        return tool.name in self.selection

    def active(self) -> list[Tool]:
        return [t for t in self.tools.values() if self.is_active(t)]

    def for_model(self) -> list[Tool]:
        """Active tools the model sees now: deferred ones only once tool_search loaded them."""
        return [t for t in self.active() if not t.deferred or t.name in self.loaded_deferred]

    def callable_from_code(self) -> list[Tool]:
        """What codemode may call: active direct tools the model can see."""
        return [t for t in self.for_model() if t.exposure == "direct"]

    def deferred(self) -> list[Tool]:
        return [t for t in self.active() if t.deferred and t.name not in self.loaded_deferred]

    def load(self, names: list[str]) -> list[str]:
        loaded = [n for n in names if n in self.tools and self.tools[n].deferred]
        self.loaded_deferred.update(loaded)
        return loaded

    def set_active(self, names: list[str]) -> None:
        self.selection = {n for n in names if n in self.tools}


class CommandRegistry:
    """Slash commands by name, in registration order."""

    def __init__(self) -> None:
        self.commands: dict[str, SlashCommand] = {}
        self.overlaps: list[Overlap] = []
        """Names taken by another plugin's command, so a later one got a ``:N`` suffix."""

    def add(self, command: SlashCommand, plugin: str, plugin_path: str) -> None:
        command.plugin = plugin
        command.path = command.path or plugin_path
        name = command.name.lstrip("/")
        existing = self.commands.get(name)
        if existing is not None and existing.plugin != plugin and existing.is_expansion and not command.is_expansion:
            # Extension commands win their plain name over prompt templates and skills.
            del self.commands[name]
            self._insert(existing, name)
        self._insert(command, name)

    def _insert(self, command: SlashCommand, base: str) -> None:
        name, n = base, 0
        while name in self.commands and self.commands[name].plugin != command.plugin:
            n += 1
            name = f"{base}:{n}"
        if n:
            kept = self.commands[base]
            kind = "prompt" if command.source == "prompt" else "command"
            self.overlaps.append(Overlap(kind, base, _owner(kept), _owner(command)))
        command.name = name
        self.commands[name] = command

    def remove_plugin(self, plugin: str) -> None:
        for name in [n for n, c in self.commands.items() if c.plugin == plugin]:
            del self.commands[name]
        self.overlaps = [o for o in self.overlaps if plugin not in (o.kept.plugin, o.other.plugin)]

    def get(self, name: str) -> SlashCommand | None:
        return self.commands.get(name)

    def all(self) -> list[SlashCommand]:
        return list(self.commands.values())

    def listing(self, more: Callable[[SlashCommand], dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """``get_commands``' list (and ``api.get_commands()``): extension commands first, then
        prompt templates, then skills; ``{name, source, description?, location?, path?,
        hasArgumentCompletions}`` each, plus what ``more(command)`` adds (RPC: ``sourceInfo``)."""
        order = {"extension": 0, "prompt": 1, "skill": 2}
        commands = []
        for c in sorted(self.commands.values(), key=lambda c: order.get(c.source, 3)):
            item: dict[str, Any] = {"name": c.name, "source": c.source}
            if c.description:
                item["description"] = c.description
            if c.location and c.source != "extension":
                item["location"] = c.location
            if c.path:
                item["path"] = c.path
            item["hasArgumentCompletions"] = c.completions is not None
            if more is not None:
                item.update(more(c))
            commands.append(item)
        return commands


def _owner(command: SlashCommand) -> Owner:
    return Owner(command.plugin, command.path, command.location)


class Shortcut:
    """A keyboard shortcut an extension registered (``api.register_shortcut``)."""

    __slots__ = ("description", "handler", "key", "path", "plugin")

    def __init__(self, key: str, handler: Callable[..., Any], description: str | None, plugin: str, path: str) -> None:
        self.key, self.handler, self.description, self.plugin, self.path = key, handler, description, plugin, path


class ShortcutRegistry:
    """Shortcuts by key (lower-case, as ``ctrl+shift+p``), in registration order; a later
    registration of a key replaces the earlier one."""

    def __init__(self) -> None:
        self.shortcuts: dict[str, Shortcut] = {}

    @staticmethod
    def normal(key: str) -> str:
        return "+".join(part.strip() for part in key.strip().casefold().split("+"))

    def add(self, shortcut: Shortcut) -> Shortcut | None:
        """File ``shortcut``; returns the one it replaced, if any."""
        key = self.normal(shortcut.key)
        if not key:
            raise ValueError("a shortcut needs a key, such as ctrl+k")
        replaced = self.shortcuts.pop(key, None)
        shortcut.key = key
        self.shortcuts[key] = shortcut
        return replaced

    def get(self, key: str) -> Shortcut | None:
        return self.shortcuts.get(self.normal(key))

    def remove_plugin(self, plugin: str) -> None:
        for key in [k for k, s in self.shortcuts.items() if s.plugin == plugin]:
            del self.shortcuts[key]

    def listing(self) -> list[dict[str, Any]]:
        """``get_shortcuts``' list: ``{key, description?}`` each."""
        return [
            {"key": s.key, "description": s.description} if s.description else {"key": s.key}
            for s in self.shortcuts.values()
        ]
