"""The system prompt of each model call: the base prompt, the tools, plugin sections, date and
directory, ``--append-system-prompt`` and the project context files (AGENTS.md / CLAUDE.md)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from atomic_host.contract.events import SystemPromptEvent

if TYPE_CHECKING:
    from atomic_host.contract.tools import Tool
    from atomic_host.core.options import Options
    from atomic_host.plugins.dispatch import Dispatcher

DEFAULT_SYSTEM_PROMPT = """\
You are an expert coding assistant. You work in the user's project through the tools below.

Guidelines:
- Read a file before you change it; prefer small, exact edits over rewriting whole files.
- Use the search and find tools to locate code instead of guessing paths.
- Run commands (tests, linters, builds) to check your work, and report what you ran.
- Never run destructive commands (deleting data, force-pushing) unless the user asked for it.
- When something is unclear or risky, ask the user before acting.
- Answer concisely; show file paths so the user can follow your changes."""
CONTEXT_FILES = ("AGENTS.md", "CLAUDE.md")


def build_system_prompt(options: Options, hooks: Dispatcher, tools: list[Tool], cwd: str, agent_dir: Path) -> str:
    """The system prompt for a model call that sees ``tools``."""
    lines = [options.system_prompt or DEFAULT_SYSTEM_PROMPT, ""]
    if tools:
        lines.append("Available tools: " + ", ".join(t.name for t in tools) + ".")
        lines += [t.prompt_snippet for t in tools if t.prompt_snippet]
    if hooks.has_impls("system_prompt"):
        for section in hooks.call("system_prompt", event=SystemPromptEvent([t.name for t in tools])):
            if section.strip():
                lines += ["", section.strip()]
    lines.append(f"Current date: {time.strftime('%Y-%m-%d')}")
    lines.append(f"Current working directory: {cwd}")
    if options.append_system_prompt:
        lines += ["", options.append_system_prompt]
    for path, text in context_files(agent_dir, cwd):
        lines += ["", f"# Project context from {path}", "", text.strip()]
    return "\n".join(lines)


def context_files(agent_dir: Path, cwd: str) -> list[tuple[str, str]]:
    """AGENTS.md (or CLAUDE.md) from the agent dir, then from each dir from the root down to ``cwd``."""
    found = []
    for directory in [agent_dir, *reversed([Path(cwd), *Path(cwd).parents])]:
        for name in CONTEXT_FILES:
            path = directory / name
            try:
                found.append((str(path), path.read_text(encoding="utf-8", errors="replace")))
                break
            except OSError:
                continue
    return found
