"""Unit tests of argument splitting, substitution, frontmatter and skill discovery."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from commands_helpers import write

from atomic_host.contract.commands import SlashCommand
from builtin_plugins.frontmatter import parse_yaml_subset, split_frontmatter
from builtin_plugins.prompts import first_line_description, load_templates, split_args, substitute_args
from builtin_plugins.skills import expand_skill, load_skills, plugin_unload, register_commands, skills_prompt


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("a b  c", ["a", "b", "c"]),
        ('a "b c" d', ["a", "b c", "d"]),
        ("'it''s' x", ["its", "x"]),
        ("\"say 'hi'\" 'x \"y\"'", ["say 'hi'", 'x "y"']),
        ('pre"mid dle"post', ["premid dlepost"]),
        (r"a\ b", ["a\\", "b"]),  # no escapes
        ('a "" b', ["a", "b"]),  # an empty quoted word adds nothing
        ('"unterminated quote', ["unterminated quote"]),
        ("tab\tsep", ["tab", "sep"]),
    ],
)
def test_split_args(text: str, expected: list[str]) -> None:
    assert split_args(text) == expected


@pytest.mark.parametrize(
    ("body", "args", "expected"),
    [
        ("$1-$2-$3", ["a", "b c"], "a-b c-"),
        ("$@|$ARGUMENTS", ["x", "y"], "x y|x y"),
        ("${1:-one} ${3:-three}", ["a", "b"], "a three"),
        ("${2:-dflt}", ["a", ""], "dflt"),
        ("${@:-nothing}", [], "nothing"),
        ("${@:-nothing}", ["p", "q"], "p q"),
        ("${@:2}", ["a", "b", "c", "d"], "b c d"),
        ("${@:2:2}", ["a", "b", "c", "d"], "b c"),
        ("${@:0}", ["a", "b"], "a b"),
        ("${@:9}", ["a"], ""),
        ("$0 $12", ["a"], " "),
        ("cost: $5", [], "cost: "),
        ("no placeholders", ["a"], "no placeholders"),
        ("$1 then $2", ["$2", "x"], "$2 then x"),  # argument text is never re-substituted
    ],
)
def test_substitute_args(body: str, args: list[str], expected: str) -> None:
    assert substitute_args(body, args) == expected


def test_first_line_description() -> None:
    assert first_line_description("\n\n  \nShort line\nnext") == "Short line"
    long = "x" * 61
    assert first_line_description(long) == "x" * 60 + "..."
    assert first_line_description("y" * 60) == "y" * 60
    assert first_line_description("\n \n") is None


def test_frontmatter_subset() -> None:
    meta, body = split_frontmatter(
        '\ufeff---\r\nname: my-skill\r\ndescription: "Say \\"hi\\""  \r\n'
        "# comment\r\nquoted: 'it''s'\r\nflag: true\r\noff: No\r\nplain: value # note\r\n"
        "folded: >\r\n  one\r\n  two\r\nliteral: |\r\n  l1\r\n  l2\r\nwrapped: first\r\n  second\r\n"
        "---\r\nBody line\r\n"
    )
    assert meta == {
        "name": "my-skill",
        "description": 'Say "hi"',
        "quoted": "it's",
        "flag": True,
        "off": False,
        "plain": "value",
        "folded": "one two",
        "literal": "l1\nl2",
        "wrapped": "first second",
    }
    assert body == "Body line\n"


def test_frontmatter_absent_or_unclosed() -> None:
    assert split_frontmatter("# Title\n---\n") == ({}, "# Title\n---\n")
    assert split_frontmatter("---\nname: x\nno end\n") == ({}, "---\nname: x\nno end\n")
    assert parse_yaml_subset("- list item\nkey:\n") == {"key": ""}


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A private HOME, so the real ``~/.agents/skills`` never leaks in."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


class _Api(SimpleNamespace):
    """The parts of ``ExtensionAPI`` the loaders read; hashable and weakly referenceable like it."""

    __hash__ = object.__hash__


def _api(tmp_path: Path, trusted: bool = True, settings: dict | None = None, **options: list[str]) -> _Api:
    agent, cwd = tmp_path / "agent", tmp_path / "work"
    agent.mkdir(exist_ok=True)
    cwd.mkdir(exist_ok=True)
    opts = SimpleNamespace(prompt_templates=options.get("prompt_templates", []), skills=options.get("skills", []))
    return _Api(agent_dir=str(agent), cwd=str(cwd), trusted=trusted, settings=settings or {}, options=opts)


def test_templates_precedence_and_trust(tmp_path: Path) -> None:
    write(tmp_path / "agent/prompts/same.md", "user version")
    write(tmp_path / "agent/prompts/notes.txt", "not a template")
    write(tmp_path / "agent/prompts/sub/deep.md", "non-recursive")
    write(tmp_path / "work/.atomic/prompts/same.md", "project version")
    write(tmp_path / "work/.atomic/prompts/proj.md", "---\ndescription: From frontmatter\n---\nbody")
    write(tmp_path / "extra/one.md", "explicit")
    write(tmp_path / "extra/proj.md", "explicit dup")
    api = _api(tmp_path, settings={"prompts": [str(tmp_path / "extra")]})
    found = {c.name: c for c in load_templates(api)}
    assert sorted(found) == ["one", "proj", "same"]
    assert found["same"].location == "user" and found["same"].description == "user version"
    assert found["proj"].location == "project" and found["proj"].description == "From frontmatter"
    assert found["one"].location == "path"
    untrusted = {c.name for c in load_templates(_api(tmp_path, trusted=False))}
    assert untrusted == {"same"}


def test_skill_discovery(tmp_path: Path) -> None:
    ok = "---\ndescription: does things\n---\nBody\n"
    write(tmp_path / "agent/skills/alpha/SKILL.md", ok)
    write(tmp_path / "agent/skills/alpha/nested/SKILL.md", "---\nname: hidden\ndescription: x\n---\n")
    write(tmp_path / "agent/skills/group/beta/SKILL.md", "---\nname: Bad_Name\ndescription: b\n---\n")
    write(tmp_path / "agent/skills/rootfile.md", ok)
    write(tmp_path / "agent/skills/nodesc/SKILL.md", "---\nname: nodesc\n---\nBody")
    write(tmp_path / "agent/skills/.hidden/SKILL.md", ok)
    write(tmp_path / "home/.agents/skills/delta/SKILL.md", ok)
    write(tmp_path / "home/.agents/skills/beta/SKILL.md", ok)  # a later duplicate: aliased
    write(tmp_path / "work/.atomic/skills/alpha/SKILL.md", ok)
    write(tmp_path / "work/.agents/skills/gamma/SKILL.md", "---\ndescription: g\ndisable-model-invocation: true\n---\n")
    write(tmp_path / "work/.agents/skills/loose.md", ok)  # root *.md only count in .atomic dirs
    (tmp_path / "work/.git").mkdir()
    write(tmp_path / ".agents/skills/above-git/SKILL.md", ok)  # beyond the git root
    explicit = write(tmp_path / "one/SKILL.md", "---\nname: one\ndescription: d\n---\n")
    skills = load_skills(_api(tmp_path, skills=[str(explicit)]))
    by_cmd = {s.command_name: s for s in skills}
    assert list(by_cmd) == [
        "skill:alpha",
        "skill:beta",
        "skill:rootfile",
        "skill:beta@user",
        "skill:delta",
        "skill:alpha@project",
        "skill:gamma",
        "skill:one",
    ]
    assert by_cmd["skill:alpha"].location == "user"
    assert by_cmd["skill:alpha@project"].location == "project"
    assert by_cmd["skill:one"].location == "path"
    api = _api(tmp_path, skills=[str(explicit)])
    assert skills_prompt(api) == ""  # the plugin has not registered for this host
    registered: list[SlashCommand] = []
    register_commands(registered.append, api)
    assert [c.name for c in registered] == list(by_cmd)
    assert {c.source for c in registered} == {"skill"}
    prompt = skills_prompt(api)
    assert "- alpha: does things (" in prompt and "- gamma" not in prompt
    assert len(prompt.splitlines()) == 8  # header + 7 model-invocable skills
    plugin_unload(api)
    assert skills_prompt(api) == ""
    assert [s.command_name for s in load_skills(_api(tmp_path, trusted=False))] == [
        "skill:alpha",
        "skill:beta",
        "skill:rootfile",
        "skill:beta@user",
        "skill:delta",
    ]


def test_expand_skill_exact(tmp_path: Path) -> None:
    path = write(tmp_path / "agent/skills/demo/SKILL.md", "---\ndescription: d\n---\n\nStep one.\nStep two.\n\n")
    (skill,) = load_skills(_api(tmp_path, trusted=False))
    head = f'<skill name="demo" location="{path}" candidate="skill:demo">\n'
    head += f"References are relative to {path.parent}.\n\nStep one.\nStep two.\n</skill>"
    assert expand_skill(skill, "") == head
    assert expand_skill(skill, "  do it  ") == head + "\n\ndo it"
