"""Prompt templates and skills through the real host: get_commands, expansion in prompt, steer and
follow_up, trust, skipped skills, and ``enableSkillCommands:false``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from commands_helpers import last_user_text, write
from suite_paths import SAMPLE_PLUGINS

from atomic_host.client import RpcError

HELLO_PLUGIN = str(SAMPLE_PLUGINS / "hello_cmd.py")

TEMPLATE = """---
description: Every substitution form
---
one=$1 two=$2 three=[$3] all=$@ args=$ARGUMENTS
d1=${1:-x} d3=${3:-none} rest=${@:2} slice=${@:1:1} alld=${@:-empty}
"""

REVIEW = "\n\nReview the code in $1 carefully and report every issue you find\n"
"""No frontmatter, a long first line: the description is cut; the body is sent verbatim."""

SKILL = """---
name: deploy
description: "Deploy the app: step by step"
---

Run ./scripts/deploy.sh, then check the logs.
"""


def file_source(path: Path, scope: str) -> dict[str, str]:
    """The ``sourceInfo`` of a command read from the file ``path``."""
    return {"path": str(path), "source": "local", "scope": scope, "origin": "top-level", "baseDir": str(path.parent)}


def user_texts(messages: list[dict[str, Any]]) -> list[str]:
    return ["".join(b["text"] for b in m["content"] if b["type"] == "text") for m in messages if m["role"] == "user"]


@pytest.fixture
def resources(sandbox: Path) -> dict[str, Path]:
    """User, project and explicit templates and skills in the sandbox."""
    agent, work = sandbox / "agent", sandbox / "work"
    return {
        "tpl": write(agent / "prompts/tpl.md", TEMPLATE),
        "review": write(agent / "prompts/review.md", REVIEW),
        "proj": write(work / ".atomic/prompts/proj.md", "Project template for $@"),
        "shadow": write(work / ".atomic/prompts/review.md", "project copy loses"),
        "cli": write(sandbox / "extra/cli.md", "From the CLI: $1"),
        "setting": write(sandbox / "more/fromsettings.md", "---\ndescription: via settings\n---\nSettings: $@"),
        "deploy": write(agent / "skills/deploy/SKILL.md", SKILL),
        "nodesc": write(agent / "skills/nodesc/SKILL.md", "---\nname: nodesc\n---\nNo description."),
        "projskill": write(work / ".atomic/skills/lint/SKILL.md", "---\ndescription: Lint things\n---\nLint."),
        "agents": write(work / ".agents/skills/fmt/SKILL.md", "---\ndescription: Format\n---\nFmt."),
    }


async def test_get_commands_order_and_fields(cmd_host: Any, sandbox: Path, resources: dict[str, Path]) -> None:
    settings = {"prompts": [str(sandbox / "more")]}
    async with cmd_host(
        "--approve", "-e", HELLO_PLUGIN, "--prompt-template", str(resources["cli"]), settings=settings
    ) as host:
        commands = (await host.client.call("get_commands"))["commands"]
    by_name = {c["name"]: c for c in commands}
    sources = [c["source"] for c in commands]
    assert sources == sorted(sources, key=["extension", "prompt", "skill"].index)
    assert by_name["hello"]["source"] == "extension" and by_name["hello"]["description"] == "say hello"
    assert "location" not in by_name["hello"]
    prompts = [c["name"] for c in commands if c["source"] == "prompt"]
    assert prompts == ["review", "tpl", "proj", "fromsettings", "cli"]
    assert by_name["tpl"] == {
        "name": "tpl",
        "source": "prompt",
        "location": "user",
        "description": "Every substitution form",
        "path": str(resources["tpl"]),
        "hasArgumentCompletions": False,
        "sourceInfo": file_source(resources["tpl"], "user"),
    }
    assert by_name["proj"]["sourceInfo"]["scope"] == "project"
    assert by_name["cli"]["sourceInfo"]["scope"] == by_name["fromsettings"]["sourceInfo"]["scope"] == "temporary"
    hello = by_name["hello"]["sourceInfo"]  # an extension file given with -e
    assert hello["source"] == "local" and hello["scope"] == "temporary" and hello["origin"] == "top-level"
    assert hello["path"] == by_name["hello"]["path"] and hello["baseDir"] == str(Path(hello["path"]).parent)
    assert by_name["review"]["description"] == "Review the code in $1 carefully and report every issue you f..."
    assert by_name["review"]["location"] == "user"  # the project copy of the same name lost
    assert by_name["proj"]["location"] == "project"
    assert by_name["cli"]["location"] == by_name["fromsettings"]["location"] == "path"
    assert by_name["fromsettings"]["description"] == "via settings"
    skills = [c["name"] for c in commands if c["source"] == "skill"]
    assert skills == ["skill:deploy", "skill:lint", "skill:fmt"]  # nodesc has no description: skipped
    assert by_name["skill:deploy"] == {
        "name": "skill:deploy",
        "source": "skill",
        "location": "user",
        "description": "Deploy the app: step by step",
        "path": str(resources["deploy"]),
        "hasArgumentCompletions": False,
        "sourceInfo": file_source(resources["deploy"], "user"),
    }
    assert by_name["skill:lint"]["location"] == by_name["skill:fmt"]["location"] == "project"


async def test_untrusted_project_resources_are_ignored(cmd_host: Any, resources: dict[str, Path]) -> None:
    async with cmd_host("--no-approve") as host:
        names = [c["name"] for c in (await host.client.call("get_commands"))["commands"]]
        host.faux.push("ok")
        await host.client.prompt_and_wait("/proj a")
        assert last_user_text(host) == "/proj a"  # not a command here: sent literally
    assert names == ["workflow", "permissions", "review", "tpl", "skill:deploy"]  # the built-ins first


async def test_prompt_expansion_and_literal_unknown(cmd_host: Any, resources: dict[str, Path]) -> None:
    async with cmd_host() as host:
        host.faux.push("one", "two", "three", "four")
        events = await host.client.prompt_and_wait('/tpl a "b c"')
        assert last_user_text(host) == (
            "one=a two=b c three=[] all=a b c args=a b c\nd1=a d3=none rest=b c slice=a alld=a b c\n"
        )
        user_end = next(e for e in events if e["type"] == "message_end" and e["message"]["role"] == "user")
        assert user_texts([user_end["message"]])[0].startswith("one=a two=b c")

        await host.client.prompt_and_wait("/tpl")
        assert last_user_text(host) == ("one= two= three=[] all= args=\nd1=x d3=none rest= slice= alld=empty\n")

        await host.client.prompt_and_wait("/nope some args")
        assert last_user_text(host) == "/nope some args"

        await host.client.prompt_and_wait("/skill:deploy  ship it to staging ")
        skill_dir = resources["deploy"].parent
        assert last_user_text(host) == (
            f'<skill name="deploy" location="{resources["deploy"]}" candidate="skill:deploy">\n'
            f"References are relative to {skill_dir}.\n\n"
            "Run ./scripts/deploy.sh, then check the logs.\n</skill>\n\nship it to staging"
        )


async def test_steer_and_follow_up_expand(cmd_host: Any, resources: dict[str, Path]) -> None:
    async with cmd_host() as host:
        host.faux.push({"content": [{"type": "text", "text": "slow"}], "delayMs": 800}, "after steer", "after follow")
        start = len(host.client.events)
        assert (await host.client.prompt("first"))["disposition"] == "started"
        await host.client.wait_for_event("message_start", after=start)
        assert (await host.client.steer("/tpl s1 's 2'"))["disposition"] == "queued"
        assert (await host.client.follow_up("/skill:deploy"))["disposition"] == "queued"
        await host.client.wait_for_idle(after=start)
        texts = user_texts((await host.client.get_messages()).messages)
        assert texts[0] == "first"
        assert texts[1].startswith("one=s1 two=s 2 three=[] all=s1 s 2")
        assert texts[2].startswith('<skill name="deploy"') and texts[2].endswith("</skill>")
        assert len(host.faux_calls()) == 3


async def test_extension_commands_still_refused_by_steer(cmd_host: Any, resources: dict[str, Path]) -> None:
    async with cmd_host("-e", HELLO_PLUGIN) as host:
        with pytest.raises(RpcError):
            await host.client.steer("/hello there")
        host.faux.push("ok")
        await host.client.prompt_and_wait("first")
        # idle with messages: a queued template is delivered at once, expanded
        host.faux.push("ok again")
        start = len(host.client.events)
        assert (await host.client.follow_up("/review src/"))["disposition"] == "queued"
        await host.client.wait_for_idle(after=start)
        assert last_user_text(host) == REVIEW.replace("$1", "src/")


async def test_skill_commands_disabled(cmd_host: Any, resources: dict[str, Path]) -> None:
    async with cmd_host(settings={"enableSkillCommands": False}) as host:
        names = [c["name"] for c in (await host.client.call("get_commands"))["commands"]]
        host.faux.push("ok")
        await host.client.prompt_and_wait("/skill:deploy now")
        assert last_user_text(host) == "/skill:deploy now"
    assert names == ["workflow", "permissions", "review", "tpl"]


WORKFLOW_COMMAND = {
    "name": "workflow",
    "source": "extension",
    "description": "List workflows, start one (/workflow <name> <input>) or cancel a run",
    "path": "builtin:builtin_plugins.workflows",
    "hasArgumentCompletions": False,
    "sourceInfo": {"path": "builtin:builtin_plugins.workflows", "source": "builtin", "scope": "user",
                   "origin": "top-level"},
}
PERMISSIONS_COMMAND = {
    "name": "permissions",
    "source": "extension",
    "description": "Show the permission mode, rules and session approvals; /permissions <mode> changes the mode",
    "path": "builtin:builtin_plugins.approvals",
    "hasArgumentCompletions": False,
    "sourceInfo": {"path": "builtin:builtin_plugins.approvals", "source": "builtin", "scope": "user",
                   "origin": "top-level"},
}


async def test_cli_skill_path(cmd_host: Any, sandbox: Path) -> None:
    skill = write(sandbox / "elsewhere/pack/SKILL.md", "---\ndescription: Packed\n---\nPack body.")
    async with cmd_host("--skill", str(sandbox / "elsewhere")) as host:
        commands = (await host.client.call("get_commands"))["commands"]
        host.faux.push("ok")
        await host.client.prompt_and_wait("/skill:pack")
        assert last_user_text(host).endswith("Pack body.\n</skill>")
    assert commands == [
        WORKFLOW_COMMAND,  # the built-ins: /workflow, /permissions
        PERMISSIONS_COMMAND,
        {"name": "skill:pack", "source": "skill", "location": "path", "description": "Packed", "path": str(skill),
         "hasArgumentCompletions": False,
         "sourceInfo": file_source(skill, "temporary")},
    ]
