"""The system prompt of each model call: the base prompt, the tools, plugin sections, date and
directory, ``--append-system-prompt`` and the project context files (AGENTS.md / CLAUDE.md)."""

from __future__ import annotations

import asyncio
import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING

from atomic_host.contract.events import SystemPromptEvent
from atomic_host.contract.records import record
from atomic_host.kit import secrets
from atomic_host.kit.log import log

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


def build_system_prompt(
    options: Options,
    hooks: Dispatcher,
    tools: list[Tool],
    cwd: str,
    context: list[tuple[str, str]],
) -> str:
    """The system prompt for a model call that sees ``tools``; ``context`` is the project context
    files' ``(path, text)`` pairs (:func:`load_context_files`)."""
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
    for path, text in context:
        lines += ["", f"# Project context from {path}", "", text.strip()]
    return "\n".join(lines)


INLINE_READ_BYTES = 64 * 1024
"""A changed context file up to this size is read on the event loop (a page-cache read of a few
µs); a bigger one is read in a worker thread."""
RACY_NS = 2_000_000_000
"""A file whose mtime or ctime is this close to the moment it was stat-ed is read again on the
next request even if its stat is unchanged: an edit in the same timestamp tick (coarse on some
filesystems) keeps size and times equal, so only files that have been quiet for a while are
trusted to the cache (git's "racy clean" rule)."""


class _Entry:
    """One context file as last read: the stat it was read under, its text (None: unreadable)."""

    __slots__ = ("key", "text", "trusted")

    def __init__(self, key: tuple[int, ...], text: str | None, trusted: bool) -> None:
        self.key = key
        self.text = text
        self.trusted = trusted


@record
class _Candidates:
    """Where the context files of one (agent dir, cwd) may be: per directory, in prompt order, the
    candidate paths (AGENTS.md, CLAUDE.md); the first directory is the agent dir."""

    paths: tuple[tuple[str, ...], ...]
    project: str
    """The project's real path: the nearest directory from cwd up that holds ``.git`` (Codex's
    project root), else cwd itself. The search for context files stops there."""


_candidates: dict[tuple[str, str], _Candidates] = {}
_files: dict[str, _Entry] = {}
"""Context file path → what was read from it."""
_refused: set[str] = set()
"""Context files already reported as leading out of the project (reported once)."""


def project_root(cwd: str) -> Path:
    """The nearest directory from ``cwd`` up that holds ``.git`` (a directory, or a file in a
    worktree or submodule), else ``cwd``: where the upward search for context files stops."""
    start = Path(cwd)
    for directory in (start, *start.parents):
        if os.path.lexists(directory / ".git"):
            return directory
    return start


def _candidate_paths(agent_dir: Path, cwd: str) -> _Candidates:
    key = (str(agent_dir), cwd)
    found = _candidates.get(key)
    if found is None:
        root = project_root(cwd)
        below = [Path(cwd), *Path(cwd).parents]
        dirs = [agent_dir, *reversed(below[: below.index(root) + 1])]
        paths = tuple(tuple(str(d / name) for name in CONTEXT_FILES) for d in dirs)
        found = _candidates[key] = _Candidates(paths, os.path.realpath(root))
    return found


def _outside(path: str, project: str) -> bool:
    """Whether ``path``, its links followed, is outside the directory ``project`` (a real path)."""
    real = os.path.realpath(path)
    return real != project and not real.startswith(project.rstrip(os.sep) + os.sep)


def _stat_key(path: str) -> tuple[int, ...] | None:
    """The stat that identifies this version of ``path``, or None when no regular file is there.
    Anything else (a directory, a FIFO, a device such as a link to ``/dev/zero``) is no context file."""
    try:
        # Most candidates are not there: access() says so without the exception os.stat raises
        # (~1 µs each, for each of the ten or so candidates of every request). One that goes away
        # between the two calls fails the stat and is nothing, as before.
        if not os.access(path, os.F_OK):
            return None
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_dev, st.st_mode


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _lookup(path: str) -> tuple[tuple[int, ...] | None, str | None, bool]:
    """(``path``'s stat probe, its cached text or None, whether that text is current). Not
    current: the file must be read and :func:`_store`-d under that probe, taken before the read
    (an edit after it changes the stat, so the next request reads the file again)."""
    key = _stat_key(path)
    if key is None:
        _files.pop(path, None)
        return None, None, True
    entry = _files.get(path)
    if entry is not None and entry.trusted and entry.key == key:
        return key, entry.text, True
    return key, None, False


def _store(path: str, key: tuple[int, ...], text: str | None) -> str | None:
    _files[path] = _Entry(key, text, time.time_ns() - max(key[0], key[1]) > RACY_NS)
    return text


def _allowed(path: str, project: str, trusted: bool) -> bool:
    """Whether a project context file may be read: it is inside the project once its links are
    followed, or the project is trusted. A link out of an untrusted project (to ``auth.json``, a
    private key) is reported once and skipped."""
    if trusted or not _outside(path, project):
        return True
    if path not in _refused:
        _refused.add(path)
        target = os.path.realpath(path)
        log.warning(f"{path} leads out of the project to {target}: not read (the project is not trusted)")
    return False


async def load_context_files(agent_dir: Path, cwd: str, trusted: bool = False) -> list[tuple[str, str]]:
    """AGENTS.md (or CLAUDE.md) from the agent dir, then from each dir from the project root
    (:func:`project_root`) down to ``cwd``, with every credential the host knows masked.

    A project's file that leads out of the project (a symlink to ``~/.ssh/id_rsa``) is read only
    when the project is ``trusted``; the agent dir's file is the user's own. Only regular files
    count. Current on every call: a file is read again whenever its stat (times, size, inode, mode)
    changed, or it appeared; one that went away is dropped; unchanged files come from memory.
    A changed file bigger than :data:`INLINE_READ_BYTES` is read in a worker thread, so the loop
    never waits on a big read; an unchanged one costs a ``stat``."""
    found = []
    candidates = _candidate_paths(agent_dir, cwd)
    for index, names in enumerate(candidates.paths):
        for path in names:
            key, text, current = _lookup(path)
            if key is None or (index and not _allowed(path, candidates.project, trusted)):
                continue
            if not current:
                read = await asyncio.to_thread(_read, path) if key[2] > INLINE_READ_BYTES else _read(path)
                text = _store(path, key, read)
            if text is not None:
                found.append((path, secrets.mask(text)))
                break
    return found
