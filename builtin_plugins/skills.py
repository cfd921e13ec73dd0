"""Built-in plugin "skills": ``/skill:<name> [args]`` commands and the skill list for the model.

A skill is a directory holding ``SKILL.md`` (found recursively) or, directly in
``<agentDir>/skills`` and ``<cwd>/.atomic/skills``, any ``*.md`` file. Search order (the first
skill of a name wins; later ones get an ``<name>@<location>`` alias): ``<agentDir>/skills``,
``~/.agents/skills`` (user), then for trusted projects ``.atomic/skills`` and ``.agents/skills``
from cwd up to the git root (project), then the ``skills`` setting and ``--skill`` (path).
Frontmatter: ``name`` (≤64 chars of ``[a-z0-9-]``, else the directory name), ``description``
(required: a skill without one is skipped), ``disable-model-invocation``.
"""

from __future__ import annotations

import os
import re
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from atomic_host import hookimpl
from atomic_host.contract.commands import SlashCommand
from atomic_host.contract.records import record
from atomic_host.kit.log import log

if TYPE_CHECKING:
    from atomic_host.contract.events import SystemPromptEvent
    from atomic_host.contract.host import HostAPI

SKILL_FILE = "SKILL.md"
_VALID_NAME = r"^[a-z0-9-]{1,64}$"
"""Compiled (and cached by ``re``) when the first skill is read, not at every start."""
_SKIP_DIRS = {"node_modules"}

_loaded: weakref.WeakKeyDictionary[HostAPI, list[Skill]] = weakref.WeakKeyDictionary()
"""Skills found by the last ``register_commands`` per host, for :func:`skills_prompt`."""


@record  # not @dataclass: no per-class code to compile at every start
class Skill:
    name: str
    description: str
    file_path: str
    base_dir: str
    location: str
    """user | project | path"""
    disable_model_invocation: bool = False
    command_name: str = ""
    """``skill:<name>``, or ``skill:<name>@<location>`` for a later skill of a taken name."""


def load_skill(path: Path, location: str, fallback_name: str) -> Skill | None:
    """Read one skill file; None (with a note on stderr) when it has no description."""
    from builtin_plugins.frontmatter import split_frontmatter

    try:
        meta, _body = split_frontmatter(path.read_text(encoding="utf-8", errors="replace"))
    except OSError as exc:
        log.warning(f"skill {path}: {exc}")
        return None
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        log.warning(f"skill {path} has no description; not loaded")
        return None
    name = meta.get("name")
    if not isinstance(name, str) or not re.match(_VALID_NAME, name):
        if name is not None:
            log.warning(f"skill {path}: invalid name {name!r}; using {fallback_name!r}")
        name = fallback_name
    return Skill(
        name=name,
        description=" ".join(description.split()),
        file_path=str(path),
        base_dir=str(path.parent),
        location=location,
        disable_model_invocation=meta.get("disable-model-invocation") is True,
    )


def skill_files(directory: Path, root_files: bool) -> Iterator[tuple[Path, str]]:
    """``(file, fallback name)`` under ``directory``: a dir with ``SKILL.md`` is one skill (not
    searched deeper); otherwise subdirs are searched and, if ``root_files``, its ``*.md`` count."""
    seen: set[str] = set()

    def walk(d: Path, top: bool) -> Iterator[tuple[Path, str]]:
        real = os.path.realpath(d)
        if real in seen:  # symlink loop
            return
        seen.add(real)
        try:
            entries = sorted(d.iterdir(), key=lambda p: p.name)
        except OSError:
            return
        skill = d / SKILL_FILE
        if skill.is_file():
            yield skill, d.name
            return
        for entry in entries:
            if entry.name.startswith(".") or entry.name in _SKIP_DIRS:
                continue
            if entry.is_dir():
                yield from walk(entry, False)
            elif top and root_files and entry.suffix == ".md" and entry.is_file():
                yield entry, entry.stem

    if directory.is_dir():
        yield from walk(directory, True)


def git_root(start: Path) -> Path | None:
    for d in (start, *start.parents):
        if (d / ".git").exists():
            return d
    return None


def ancestor_dirs(cwd: Path) -> list[Path]:
    """cwd and its parents up to the git root (to the filesystem root outside a repository)."""
    root = git_root(cwd)
    dirs = []
    for d in (cwd, *cwd.parents):
        dirs.append(d)
        if d == root:
            break
    return dirs


def skill_sources(api: HostAPI) -> Iterator[tuple[Path, str, bool]]:
    """``(dir or file, location, root *.md files count)`` in precedence order."""
    from builtin_plugins.prompts import explicit_paths

    yield Path(api.agent_dir) / "skills", "user", True
    yield Path.home() / ".agents" / "skills", "user", False
    if api.trusted:
        cwd = Path(api.cwd)
        yield cwd / ".atomic" / "skills", "project", True
        for d in ancestor_dirs(cwd):
            yield d / ".agents" / "skills", "project", False
    for p in explicit_paths(api, "skills", "skills"):
        if not p.exists():
            log.warning(f"skill path not found: {p}")
        yield p, "path", True


def load_skills(api: HostAPI) -> list[Skill]:
    """Every loadable skill, in search order, with its command name assigned."""
    skills: list[Skill] = []
    files: set[str] = set()
    names: set[str] = set()
    for source, location, root_files in skill_sources(api):
        if source.is_file():
            found: Iterator[tuple[Path, str]] = iter([(source, source.parent.name)])
        else:
            found = skill_files(source, root_files)
        for path, fallback in found:
            real = os.path.realpath(path)
            if real in files:  # the same file reached through two sources (or a symlink)
                continue
            files.add(real)
            skill = load_skill(Path(real), location, fallback)
            if skill is None:
                continue
            name = skill.name
            if name in names:
                name = f"{skill.name}@{location}"
                if name in names:
                    log.warning(f"skill {real}: name {skill.name!r} already taken; skipped")
                    continue
            names.add(name)
            skill.command_name = f"skill:{name}"
            skills.append(skill)
    return skills


def expand_skill(skill: Skill, args: str) -> str:
    """The ``<skill …>`` block (body read now, frontmatter stripped), then the args if any."""
    from builtin_plugins.frontmatter import strip_frontmatter

    body = strip_frontmatter(Path(skill.file_path).read_text(encoding="utf-8", errors="replace")).strip()
    block = (
        f'<skill name="{skill.name}" location="{skill.file_path}" candidate="{skill.command_name}">\n'
        f"References are relative to {skill.base_dir}.\n\n{body}\n</skill>"
    )
    args = args.strip()
    return f"{block}\n\n{args}" if args else block


def loaded_skills() -> list[Skill]:
    """The skills the last ``register_commands`` found (the ``read`` tool's ``skill://``)."""
    found: list[Skill] = []
    for skills in list(_loaded.values()):
        found += skills
    return found


def skills_prompt(api: HostAPI) -> str:
    """System-prompt section listing the skills the model may load itself.

    '' when there are none, or when this plugin is not registered (disabled or unloaded): the
    list is the one found by the last ``register_commands``, so it never rescans the disk.
    """
    visible = [s for s in _loaded.get(api, ()) if not s.disable_model_invocation]
    if not visible:
        return ""
    lines = [
        "Skills (specialized instructions): when a task matches a skill's description, read its "
        "file first; resolve relative paths in it against the skill file's directory.",
    ]
    lines += [f"- {s.command_name.removeprefix('skill:')}: {s.description} ({s.file_path})" for s in visible]
    return "\n".join(lines)


@hookimpl
def system_prompt(event: SystemPromptEvent, api: HostAPI) -> str | None:
    """List model-invocable skills when the model can read their files."""
    if "read" not in event.tools:
        return None
    return skills_prompt(api) or None


@hookimpl
def plugin_unload(api: HostAPI) -> None:
    _loaded.pop(api, None)


@hookimpl
def register_commands(register: Callable[[SlashCommand], None], api: HostAPI) -> None:
    skills = load_skills(api)
    _loaded[api] = skills
    if api.settings.get("enableSkillCommands") is False:
        return
    for skill in skills:
        register(
            SlashCommand(
                skill.command_name,
                description=skill.description,
                path=skill.file_path,
                source="skill",
                location=skill.location,
                expand=lambda args, s=skill: expand_skill(s, args),
            )
        )
