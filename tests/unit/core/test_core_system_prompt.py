"""What the model is told: the system prompt, project context files, the tool list."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from atomic_host.engine import system_prompt
from atomic_host.testing import start_host


async def test_system_prompt_has_tools_cwd_and_agents_md() -> None:
    async with start_host("--append-system-prompt", "Always answer in haiku.") as host:
        (host.cwd / "AGENTS.md").write_text("Run `make check` before you say you are done.\n")
        (host.agent_dir / "AGENTS.md").write_text("The user prefers British spelling.\n")
        host.faux.push("ok")
        await host.client.prompt_and_wait("hi")
        call = host.faux_calls()[-1]
        prompt = call["context"]["systemPrompt"]
        assert f"Current working directory: {host.cwd}" in prompt
        assert "Always answer in haiku." in prompt
        # Global context first, then the project's (root → cwd order).
        assert prompt.index("British spelling") < prompt.index("make check")
        tool_names = [t["name"] for t in call["context"]["tools"]]
        assert "Available tools: " + ", ".join(tool_names) + "." in prompt
        assert {"read", "bash", "edit", "write"} <= set(tool_names)


async def test_unknown_default_thinking_level_falls_back_instead_of_failing() -> None:
    async with start_host(settings={"defaultThinkingLevel": "turbo"}) as host:
        state = await host.client.get_state()
        assert state["thinkingLevel"] == "medium"


async def test_context_file_edits_between_prompts_are_seen_on_the_next_prompt() -> None:
    """The context files are kept in memory keyed on their stat: every change between two prompts
    (edit, a new file, a removed one, CLAUDE.md taking over) shows in the next model call, also
    when size and mtime stay the same, and a file too big to read on the loop is still read."""
    old = 1_600_000_000  # mtimes long past: the cache trusts them (no "racy" re-read)

    async def prompt_text(host: Any) -> str:
        host.faux.push("ok")
        await host.client.prompt_and_wait("hi")
        return host.faux_calls()[-1]["context"]["systemPrompt"]

    async with start_host() as host:
        agents, claude = host.cwd / "AGENTS.md", host.cwd / "CLAUDE.md"
        assert "Project context from" not in await prompt_text(host)
        agents.write_text("rule one\n")
        os.utime(agents, (old, old))
        assert "rule one" in await prompt_text(host)  # created
        # Once its last change is older than RACY_NS, the file is trusted to its stat.
        await asyncio.sleep(system_prompt.RACY_NS / 1e9 + 0.1)
        assert "rule one" in await prompt_text(host)
        assert "rule one" in await prompt_text(host)  # unchanged: from memory
        agents.write_text("rule two\n")  # same size, same mtime: only the ctime moves
        os.utime(agents, (old, old))
        text = await prompt_text(host)
        assert "rule two" in text and "rule one" not in text
        claude.write_text("claude rule\n")
        assert "claude rule" not in await prompt_text(host)  # AGENTS.md comes first
        agents.unlink()
        text = await prompt_text(host)
        assert "rule two" not in text and f"# Project context from {claude}" in text and "claude rule" in text
        claude.unlink()
        assert "Project context from" not in await prompt_text(host)
        big = "big rule " + "x" * (system_prompt.INLINE_READ_BYTES + 10) + " end of big"
        agents.write_text(big)
        assert "end of big" in await prompt_text(host)
