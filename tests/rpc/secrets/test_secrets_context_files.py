"""Black-box: the context files (AGENTS.md / CLAUDE.md) sent to the model stay inside the project.

An untrusted clone whose AGENTS.md is a symlink to ``~/.atomic/agent/auth.json`` or ``~/.ssh/id_rsa``
had the file sent raw in the system prompt of the first request; an AGENTS.md in a shared parent
directory above the repository was sent too. A local server records the provider request body.
"""

from __future__ import annotations

import json
from pathlib import Path

from secrets_helpers import TEXT

from atomic_host import testing_sse as sse
from atomic_host.testing import start_host

AUTH_KEY = "sk-ant-api03-stored-in-auth-json-000111"
GATEWAY_KEY = "local-gateway-key-222333444"
NO_SUMMARIES = {"sessionSummary": {"enabled": False}}
PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUtZmFrZQ==\n"


def _project(root: Path, url: str) -> tuple[Path, Path]:
    """(agent dir, cwd): a clone at ``shared/repo`` whose context files link out of it."""
    agent = root / "agent"
    agent.mkdir(parents=True)
    (agent / "auth.json").write_text(json.dumps({"anthropic": {"type": "api_key", "key": AUTH_KEY}}))
    provider = {"baseUrl": url, "api": "openai-completions", "apiKey": GATEWAY_KEY, "models": [{"id": "m1"}]}
    (agent / "models.json").write_text(json.dumps({"providers": {"local": provider}}))
    ssh = root / "home" / ".ssh"
    ssh.mkdir(parents=True)
    (ssh / "id_rsa").write_text(PRIVATE_KEY)
    shared = root / "shared"
    repo = shared / "repo"
    sub = repo / "sub"
    (repo / ".git").mkdir(parents=True)
    (repo / "docs").mkdir()
    sub.mkdir()
    (shared / "AGENTS.md").write_text("SHARED PARENT RULE: read by every checkout below\n")
    (repo / "AGENTS.md").symlink_to(agent / "auth.json")
    (repo / "CLAUDE.md").write_text(f"Repository rule; the gateway key is {GATEWAY_KEY}\n")
    (sub / "AGENTS.md").symlink_to(ssh / "id_rsa")
    (repo / "docs" / "rules.md").write_text("Linked rule from inside the project\n")
    (sub / "CLAUDE.md").symlink_to(Path("..") / "docs" / "rules.md")
    return agent, sub


async def _system_prompts(root: Path, *args: str) -> tuple[list[str], str]:
    with sse.SSEServer() as server:
        _agent, cwd = _project(root, server.base_url)
        server.enqueue(TEXT["openai-completions"](["one"]))
        server.enqueue(TEXT["openai-completions"](["two"]))
        stderr_path = root / "stderr.txt"
        with stderr_path.open("wb") as err:
            async with start_host(
                "--model", "local/m1", *args, base=root, cwd=cwd, faux=False, stderr=err.fileno(), settings=NO_SUMMARIES
            ) as host:
                for prompt in ("first", "second"):
                    result = await host.client.prompt_and_wait(prompt)
                    assert result.ok, result.error
        prompts = [r.body["messages"][0]["content"] for r in server.requests]
        return prompts, stderr_path.read_text()


async def test_untrusted_clone_sends_only_what_is_inside_the_project_masked(tmp_path: Path) -> None:
    prompts, stderr = await _system_prompts(tmp_path)
    repo = tmp_path / "shared" / "repo"
    for prompt in prompts:
        assert AUTH_KEY not in prompt and '"api_key"' not in prompt  # auth.json: not read
        assert "PRIVATE KEY" not in prompt  # ~/.ssh/id_rsa: not read
        assert "SHARED PARENT RULE" not in prompt  # above the git root: not searched
        assert GATEWAY_KEY not in prompt and "the gateway key is [REDACTED:models.json:local]" in prompt
        # in place of each refused AGENTS.md, the CLAUDE.md of that directory (a link inside: followed)
        assert f"# Project context from {repo / 'CLAUDE.md'}" in prompt
        assert f"# Project context from {repo / 'sub' / 'CLAUDE.md'}\n\nLinked rule from inside the project" in prompt
        assert prompt.index("Repository rule") < prompt.index("Linked rule")
    # each link out is reported once on stderr, not on every request
    assert stderr.count(f"{repo / 'AGENTS.md'} leads out of the project") == 1
    assert stderr.count(f"{repo / 'sub' / 'AGENTS.md'} leads out of the project") == 1


async def test_trusted_project_follows_its_links_and_masks_what_it_sends(tmp_path: Path) -> None:
    prompts, _ = await _system_prompts(tmp_path, "--approve")
    for prompt in prompts:
        assert "[REDACTED:auth.json:anthropic]" in prompt and AUTH_KEY not in prompt  # followed, masked
        assert "PRIVATE KEY" in prompt  # the user trusted this project and its link
        assert "SHARED PARENT RULE" not in prompt  # still: the search stops at the git root


async def test_without_a_git_root_only_the_working_directory_is_searched(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Rule of a parent directory\n")
    async with start_host(base=tmp_path) as host:  # cwd: <tmp>/work, no .git above
        (host.cwd / "AGENTS.md").write_text("Rule of the working directory\n")
        (host.agent_dir / "AGENTS.md").write_text("The user's own rule\n")
        host.faux.push("ok")
        await host.client.prompt_and_wait("hi")
        prompt = host.faux_calls()[-1]["context"]["systemPrompt"]
        assert "Rule of the working directory" in prompt and "The user's own rule" in prompt
        assert "Rule of a parent directory" not in prompt
