"""``AtomicOptions``: how the client starts the host, as typed fields instead of command-line strings."""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from atomic_host.client.approvals import Allow, Deny
    from atomic_host.client.types import ExtensionUiRequest

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions"]
CanUseTool = Callable[[str, dict[str, Any]], "Allow | Deny | Awaitable[Allow | Deny]"]
"""``can_use_tool(tool_name, args)``: decides an approval the host asks for (sync or async)."""
UiHandler = Callable[["ExtensionUiRequest"], Any]
"""``on_ui_request(request)``: answers an extension's dialog (sync or async; see the client's docs)."""


@dataclass(kw_only=True)
class AtomicOptions:
    """How to start ``atomic --mode rpc`` and how the client treats it.

    Every field is optional; ``None`` leaves the host's own default (settings, then built-ins)."""

    cwd: str | os.PathLike[str] | None = None
    """The host's working directory (the project): default, the client's."""
    model: str | None = None
    """``id``, ``provider/id`` or ``provider/id:thinking`` (``--model``)."""
    provider: str | None = None
    """A provider whose first available model is used (``--provider``)."""
    thinking: ThinkingLevel | None = None
    """The thinking level (``--thinking``)."""
    system_prompt: str | None = None
    """Replaces the default system prompt (``--system-prompt``)."""
    append_system_prompt: str | None = None
    """Appended to the system prompt (``--append-system-prompt``)."""
    tools: Sequence[str] | None = None
    """The tools offered to the model: names replace the defaults, ``+name`` adds one, ``-name``
    removes one; ``[]`` offers none (``--tools`` / ``--no-tools``)."""
    exclude_tools: Sequence[str] | None = None
    """Tools left out whatever else selects them (``--exclude-tools``)."""
    extensions: Sequence[str | os.PathLike[str]] = ()
    """Extension files or directories to load (``-e`` each)."""
    skills: Sequence[str | os.PathLike[str]] = ()
    """Skill files or directories (``--skill`` each)."""
    prompt_templates: Sequence[str | os.PathLike[str]] = ()
    """Prompt template files or directories (``--prompt-template`` each)."""
    env: dict[str, str] | None = None
    """Variables set for the host on top of the environment the client runs in."""
    agent_dir: str | os.PathLike[str] | None = None
    """The agent directory (settings, auth, sessions): ``ATOMIC_CODING_AGENT_DIR``; default ``~/.atomic``."""
    session: str | None = None
    """A session id or file to open (``--session``)."""
    continue_session: bool = False
    """Continue the project's most recent session (``--continue``)."""
    persist_session: bool = True
    """False keeps the session in memory only (``--no-session``)."""
    session_name: str | None = None
    """A name for the new session (``--name``)."""
    permission_mode: PermissionMode | None = None
    """Which tool calls ask first (``--permission-mode``; needs the approvals plugin): ``default``
    asks before edits and shell commands, ``acceptEdits`` only before shell commands, ``plan``
    refuses changes, ``bypassPermissions`` never asks."""
    trust_project: bool | None = None
    """Load (True) or ignore (False) the project's ``.atomic`` extensions and settings (``--approve`` /
    ``--no-approve``); None asks nobody and keeps the recorded choice."""
    args: Sequence[str] = ()
    """More command-line arguments, appended as they are."""
    command: Sequence[str] | None = None
    """The host command, up to and excluding ``--mode rpc``: default :func:`default_command`."""
    stderr: int | None = None
    """Where the host's stderr goes (see ``RpcClient``): default, copied to the client's stderr."""
    max_records: int | None = 200_000
    """How many events, responses and lines the client keeps of each (None: all)."""
    can_use_tool: CanUseTool | None = None
    """Answers the approval dialogs (``Allow`` / ``Deny``): see docs/client.md "Approvals"."""
    on_ui_request: UiHandler | None = None
    """Answers every other extension UI request."""
    abort_on_exit: bool = True
    """Leaving a run early (``break`` out of ``stream()``, a timeout, a cancelled task) aborts it."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Free for the caller (not read by the client)."""

    def argv(self) -> list[str]:
        """The command-line arguments after ``--mode rpc`` these options stand for."""
        out: list[str] = []
        for flag, value in (
            ("--model", self.model),
            ("--provider", self.provider),
            ("--thinking", self.thinking),
            ("--system-prompt", self.system_prompt),
            ("--append-system-prompt", self.append_system_prompt),
            ("--session", self.session),
            ("--name", self.session_name),
            ("--permission-mode", self.permission_mode),
        ):
            if value is not None:
                out += [flag, value]
        if self.tools is not None:
            out += ["--tools", ",".join(self.tools)] if self.tools else ["--no-tools"]
        if self.exclude_tools:
            out += ["--exclude-tools", ",".join(self.exclude_tools)]
        listed = (("-e", self.extensions), ("--skill", self.skills), ("--prompt-template", self.prompt_templates))
        for flag, paths in listed:
            for path in paths:
                out += [flag, os.fspath(path)]
        if self.continue_session:
            out.append("--continue")
        if not self.persist_session:
            out.append("--no-session")
        if self.trust_project is not None:
            out.append("--approve" if self.trust_project else "--no-approve")
        return out + list(self.args)

    def environment(self) -> dict[str, str]:
        """The host's environment: the client's, plus :attr:`env` and :attr:`agent_dir`."""
        env = dict(os.environ)
        if self.agent_dir is not None:
            env["ATOMIC_CODING_AGENT_DIR"] = os.fspath(self.agent_dir)
        env.update(self.env or {})
        return env


def default_command() -> list[str]:
    """The host command when none is given: the ``atomic`` script installed beside the running
    interpreter (the one this package installed), else ``python -m atomic_host`` with that
    interpreter, else ``atomic`` on ``PATH``."""
    import sysconfig  # here: only this needs it

    scripts = Path(sysconfig.get_path("scripts"))
    for candidate in (scripts / "atomic", Path(sys.executable).parent / "atomic"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return [str(candidate)]
    if sys.executable and Path(sys.executable).name.startswith("python"):
        return [sys.executable, "-m", "atomic_host"]
    import shutil  # here: it imports the compression modules

    found = shutil.which("atomic")
    if found is None:
        raise FileNotFoundError("no atomic-host command found: pass AtomicOptions(command=[...])")
    return [found]
