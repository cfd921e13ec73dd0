"""What the model is told: the system prompt, project context files, the tool list."""

from __future__ import annotations

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
