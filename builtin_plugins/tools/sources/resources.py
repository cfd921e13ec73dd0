"""Internal resources: ``skill://NAME[/FILE]`` and ``artifact://[NAME]``, resolved to the file they name.

- ``skill://NAME`` is the skill's SKILL.md (or its ``.md`` file), ``skill://NAME/FILE`` a file in
  the skill's directory (never outside it, symlinks included), ``skill://`` lists the skills.
- ``artifact://`` lists this session's saved full outputs (bash logs of truncated commands, tool
  results that were cut); ``artifact://NAME`` reads one, by file name or by the tool call id.

A resolved file is read like any other, so selectors apply (``skill://x/ref.md:10-20``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from atomic_host.contract.tools import ToolError, ToolResult

if TYPE_CHECKING:
    from atomic_host.contract.tools import ToolContext

SCHEMES = ("skill", "artifact")


def resolve(url: str, ctx: ToolContext) -> str | ToolResult:
    """The local path ``url`` names, or a listing (``skill://``, ``artifact://``)."""
    scheme, _, rest = url.partition("://")
    scheme = scheme.lower()
    if scheme == "skill":
        return _skill(rest)
    return _artifact(rest, ctx)


def _inside(base: str, relative: str, url: str) -> str:
    root = os.path.realpath(base)
    target = os.path.realpath(os.path.join(root, relative))
    if os.path.commonpath([root, target]) != root:
        raise ToolError(f"{url} points outside its directory")
    return target


def _skill(rest: str) -> str | ToolResult:
    from builtin_plugins.skills import loaded_skills

    skills = loaded_skills()
    name, _, inner = rest.strip("/").partition("/")
    if not name:
        lines = [f"skill://{s.command_name.removeprefix('skill:')}: {s.description}" for s in skills]
        return ToolResult.text("\n".join(lines) if lines else "(no skills)", {"skills": len(lines)})
    skill = next((s for s in skills if s.command_name.removeprefix("skill:") == name), None)
    if skill is None:
        names = ", ".join(s.command_name.removeprefix("skill:") for s in skills) or "(none)"
        raise ToolError(f"No skill named {name!r}. Skills: {names}")
    if not inner:
        return skill.file_path
    return _inside(skill.base_dir, inner, f"skill://{rest}")


def _artifacts(ctx: ToolContext) -> list[Path]:
    found: list[Path] = []
    for directory in ctx.artifact_dirs():
        try:
            entries = sorted(Path(directory).iterdir(), key=lambda p: p.stat().st_mtime)
        except OSError:
            continue
        found += [p for p in entries if p.is_file() and (p.suffix == ".txt" or p.name.startswith("atomic-bash-"))]
    return found


def _artifact(rest: str, ctx: ToolContext) -> str | ToolResult:
    from atomic_host.kit.tempdirs import sanitize_id

    name = rest.strip("/")
    found = _artifacts(ctx)
    if not name:
        lines = [f"artifact://{p.name}  ({p.stat().st_size:,} bytes)" for p in found]
        text = "\n".join(lines) if lines else "(no saved outputs in this session)"
        return ToolResult.text(text, {"artifacts": len(lines)})
    for candidate in (name, f"{sanitize_id(name)}.txt"):
        match = next((p for p in reversed(found) if p.name == candidate or p.stem == candidate), None)
        if match is not None:
            return str(match)
    raise ToolError(f"No saved output named {name!r} in this session; read artifact:// to list them")
