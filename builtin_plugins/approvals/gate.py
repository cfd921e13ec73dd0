"""The decision: permission mode, rules and what the user allowed for the session (docs/permissions.md).

Order: a deny rule refuses; ``bypassPermissions`` runs the rest; ``plan`` runs read-only tools that
no ask rule names and refuses everything else; what the user allowed for this session runs; an ask
rule asks; an allow rule runs; then the mode: unset runs everything, ``default`` asks before every
tool that is not read-only, ``acceptEdits`` lets ``edit``/``write`` inside the working directory run.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from atomic_host.contract.records import field, record
from atomic_host.contract.results import ToolCallDecision
from atomic_host.contract.tools import Approval, ApprovalAnswer
from atomic_host.kit.fsio import read_json_object
from atomic_host.kit.permission_modes import ASKING, mode_named, startup_mode
from atomic_host.kit.proposed import proposed_change, unified_diff
from builtin_plugins.approvals import shell
from builtin_plugins.approvals.rules import (
    CANONICAL,
    WEB_TOOL,
    Call,
    Rule,
    RuleError,
    allowed,
    matches,
    parse_rule,
    prepare,
    uncovered,
)

if TYPE_CHECKING:
    from atomic_host.contract.events import ToolCallEvent
    from atomic_host.contract.host import HostAPI

log = logging.getLogger("atomic.approvals")

REJECTED = "The user rejected this tool call"
"""What the model gets for a plain ``Deny`` (a ``message`` replaces it)."""
PLAN_NOTE = "plan mode runs only read-only tools (change the permission mode to let it run)"
EDIT_TOOLS = ("edit", "write")
TITLE_CHARS = 200
LISTS = ("deny", "ask", "allow")


@record
class Verdict:
    kind: Literal["allow", "ask", "refuse"]
    why: str = ""
    """ask: why it is asked (``the permission mode default asks before bash``); refuse: the text the model gets."""


@record
class Question:
    """An ``ask`` verdict with what the dialog shows and what "Allow for this session" adds."""

    verdict: Verdict
    call: Call
    diff: str | None = None
    grants: list[Rule] = field(default_factory=list)


@record
class RuleSet:
    allow: list[Rule] = field(default_factory=list)
    deny: list[Rule] = field(default_factory=list)
    ask: list[Rule] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _setting(data: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


def load_rules(api: HostAPI) -> RuleSet:
    """The user's rules, the project's when it is trusted (``.atomic/settings.json``), and in ACP
    mode ``acp.allowTools`` / ``acp.askTools`` as allow / ask rules. Lists add up across files (a
    project cannot drop a user's deny rule); a rule that cannot be read is reported and skipped."""
    found = RuleSet()
    sources = [("user", read_json_object(Path(api.agent_dir) / "settings.json", "settings"))]
    if api.trusted:
        sources.append(("project", read_json_object(Path(api.cwd) / ".atomic" / "settings.json", "project settings")))
    for source, data in sources:
        for kind in LISTS:
            key = f"permissions.{kind}"
            entries = _setting(data, key)
            if entries is None:
                continue
            if not isinstance(entries, list):
                found.errors.append(f"{source} settings {key}: a list of rules, not {type(entries).__name__}")
                continue
            for i, text in enumerate(entries):
                try:
                    getattr(found, kind).append(parse_rule(text, source, api.cwd))
                except RuleError as exc:
                    found.errors.append(f"{source} settings {key}[{i}]: {exc}; ignored")
    if api.mode == "acp":
        for key, kind in (("acp.allowTools", "allow"), ("acp.askTools", "ask")):
            names = _setting(api.settings, key)
            for name in names if isinstance(names, list) else []:
                try:
                    getattr(found, kind).append(parse_rule(name, "acp", api.cwd))
                except RuleError as exc:
                    found.errors.append(f"{key}: {exc}; ignored")
    return found


class Approvals:
    """One host's approvals: the startup mode, each session's mode and grants, the rules. Offered
    to frontends as the ``approvals`` service (ACP sets its session modes through it)."""

    def __init__(self, api: HostAPI) -> None:
        self.api = api
        self.modes: dict[str, str | None] = {}
        self.grants: dict[str, list[Rule]] = {}
        self._last_question: asyncio.Future[None] | None = None
        self.read_settings()

    def read_settings(self) -> None:
        """The startup mode, the rules and the ask timeout, from the settings as they are now (at
        start and on ``reload``; a mode set with ``/permissions`` and the session's grants stay)."""
        api = self.api
        self.startup = startup_mode(
            getattr(api.options, "permission_mode", None),
            lambda key: _setting(api.settings, key),
            api.mode,
            log.warning,
        )
        self.rules = load_rules(api)
        for error in self.rules.errors:
            log.warning(f"permission rule {error}")
        timeout = _setting(api.settings, "permissions.askTimeoutMs")
        valid = isinstance(timeout, int) and not isinstance(timeout, bool) and timeout > 0
        self.ask_timeout: float | None = timeout / 1000 if valid else None

    # --- modes ---

    def mode(self, session_id: str | None) -> str | None:
        """The session's mode (None: unset, tools run unless a rule says otherwise)."""
        return self.modes.get(session_id or "", self.startup)

    def set_mode(self, session_id: str | None, mode: str) -> str:
        """Set a session's mode (a permission mode or an ACP mode id); returns the permission mode.
        ValueError for a name that is none."""
        named = mode_named(mode)
        if named is None:
            raise ValueError(f"unknown permission mode {mode!r}")
        self.modes[session_id or ""] = named
        return named

    def enforcing(self) -> bool:
        """Whether this gate has a policy to keep: a mode that asks (at start or in a session) or a
        deny or ask rule. While it does, the gate fails closed."""
        modes = {self.startup, *self.modes.values()}
        return bool(modes & ASKING) or bool(self.rules.deny or self.rules.ask)

    # --- the gate ---

    async def gate(self, event: ToolCallEvent) -> ToolCallDecision | None:
        api = self.api
        session = api.session_id or ""
        mode = self.mode(session)
        rules = self.rules
        if mode is None and not (rules.deny or rules.ask):
            return None  # nothing set: as the protocol always ran tools
        if mode == "bypassPermissions" and not rules.deny:
            return None
        # The calls of one message run in parallel; their questions are asked one at a time, in
        # the order the calls came: each waits for the one before it to be answered.
        before, mine = self._last_question, asyncio.get_running_loop().create_future()
        self._last_question = mine
        try:
            return await self._decide(event, mode, session, before)
        finally:
            _after(before, mine)

    async def _decide(
        self, event: ToolCallEvent, mode: str | None, session: str, before: asyncio.Future[None] | None
    ) -> ToolCallDecision | None:
        api = self.api
        name, args, cwd = event.tool_name, dict(event.input), api.session_cwd
        read_only = self._read_only(name)
        question = await asyncio.to_thread(self.question, name, args, read_only, mode, session, cwd)
        verdict = question.verdict
        if verdict.kind == "allow":
            return None
        if verdict.kind == "refuse":
            return ToolCallDecision(block=True, reason=verdict.why)
        if before is not None:
            await asyncio.shield(before)
        if allowed(self.grants.get(session, []), question.call):  # allowed for the session meanwhile
            return None
        scope = ", ".join(g.text for g in question.grants) or None
        approval = Approval(name, event.tool_call_id, event.input, title(name, args), cwd, question.diff, scope)
        ask = getattr(api.ui, "approve", None)
        if ask is None:
            answer = ApprovalAnswer("deny", why=f"--mode {api.mode} has no one to ask", unasked=True)
        else:
            answer = await ask(approval, timeout=self.ask_timeout)
        if answer.choice == "session":
            self.grants.setdefault(session, []).extend(question.grants)
        if answer.choice in ("once", "session"):
            return None
        return ToolCallDecision(block=True, reason=self._denial(name, args, verdict, answer, scope))

    def _denial(
        self, name: str, args: dict[str, Any], verdict: Verdict, answer: ApprovalAnswer, scope: str | None
    ) -> str:
        """The text the model gets when the call is not approved."""
        if answer.unasked:
            rule = f" or a permissions.allow rule such as {scope.split(', ')[0]}" if scope else ""
            text = (
                f"{name} was not run: {verdict.why}, and {answer.why}. To let it run, start with "
                f"--permission-mode acceptEdits (file edits) or bypassPermissions{rule}."
            )
            log.warning(f"permission: refused {name}: {summary(name, args)}: {verdict.why}, and {answer.why}")
            return text
        if answer.message:
            return answer.message
        return f"The {name} call was not approved: {answer.why}" if answer.why else REJECTED

    def _read_only(self, name: str) -> bool:
        tool = next((t for t in self.api.get_all_tools() if t.name == name), None)
        return bool(tool is not None and tool.read_only)

    def preview(self, name: str, args: dict[str, Any], session_id: str | None, cwd: str) -> str:
        """allow | ask | refuse: what :meth:`gate` would decide now, before asking (ACP shows a call
        that will be asked about as pending). Touches the disk for symlinks."""
        mode = self.mode(session_id)
        if mode is None and not (self.rules.deny or self.rules.ask):
            return "allow"
        call = prepare(name, args, cwd)
        return self.verdict(call, self._read_only(name), mode, session_id or "", cwd).kind

    def question(
        self, name: str, args: dict[str, Any], read_only: bool, mode: str | None, session: str, cwd: str
    ) -> Question:
        """The verdict on one call, with the dialog's diff and the session grants when it asks.
        Reads the disk (symlinks, the file a diff is taken from): runs in a worker thread."""
        call = prepare(name, args, cwd)
        verdict = self.verdict(call, read_only, mode, session, cwd)
        if verdict.kind != "ask":
            return Question(verdict, call)
        change = proposed_change(name, args, cwd)
        diff = unified_diff(change, cwd) if change is not None else None
        return Question(verdict, call, diff, self._grants_for(call, session))

    def verdict(self, call: Call, read_only: bool, mode: str | None, session: str, cwd: str) -> Verdict:
        name, rules = call.name, self.rules
        read_only = read_only and not call.web  # a URL's host learns what the URL carries: asked as WebFetch
        for rule in rules.deny:
            if matches(rule, call):
                why = f"Permission to use {name} was denied by the rule {rule.text} ({rule.source} settings)"
                return Verdict("refuse", why)
        if mode == "bypassPermissions":
            return Verdict("allow")
        ask = next((r for r in rules.ask if matches(r, call)), None)
        if mode == "plan":
            if read_only and ask is None:
                return Verdict("allow")
            label = "Read only" if self.api.mode == "acp" else "plan"
            return Verdict("refuse", f"{name} is not allowed in {label} mode: {PLAN_NOTE}")
        if allowed(self.grants.get(session, []), call):
            return Verdict("allow")
        if ask is not None:
            return Verdict("ask", f"the rule {ask.text} ({ask.source} settings) asks before it")
        if allowed(rules.allow, call) or mode is None or read_only:
            return Verdict("allow")
        if mode == "acceptEdits" and name in EDIT_TOOLS and call.paths and all(_inside(p, cwd) for p in call.paths):
            return Verdict("allow")
        return Verdict("ask", f"the permission mode {mode} asks before {'a read of a URL' if call.web else name}")

    def _grants_for(self, call: Call, session: str) -> list[Rule]:
        """What "Allow for this session" remembers: for ``bash`` each subcommand the allow rules and
        earlier grants do not cover, by prefix (``npm test:*``) or exactly (``shell.prefix``); an
        opaque command exactly as a whole; for a file tool that tool on that path; otherwise the tool."""
        name = call.name
        if call.web:  # by domain, as Claude Code remembers WebFetch
            spec = f"domain:{call.host}"
            return [] if call.host is None else [Rule(f"WebFetch({spec})", WEB_TOOL, spec, "session", literal=True)]
        if call.command is not None:
            command = call.command
            if command.opaque:
                whole = command.whole
                return [Rule(f"Bash({whole})", "bash", whole, "session", literal=True)]
            grants = []
            for part in uncovered([*self.rules.allow, *self.grants.get(session, [])], command):
                head = None if part.writes else shell.prefix(part)
                text = f"Bash({head}:*)" if head else f"Bash({part.text})"
                grants.append(Rule(text, "bash", head or part.text, "session", literal=True, prefix=head is not None))
            return grants
        if call.paths is not None:
            path = call.path
            return [] if path is None else [Rule(f"{CANONICAL[name]}(/{path})", name, path, "session", literal=True)]
        return [Rule(name, name.lower(), None, "session", literal=True)]

    # --- /permissions ---

    def describe(self, session_id: str | None) -> str:
        lines = [f"Permission mode: {self.mode(session_id) or 'unset (tools run without asking)'}"]
        for kind in LISTS:
            for rule in getattr(self.rules, kind):
                lines.append(f"  {kind} {rule.text} ({rule.source})")
        for rule in self.grants.get(session_id or "", []):
            lines.append(f"  allowed for this session: {rule.text}")
        lines += [f"  ignored: {error}" for error in self.rules.errors]
        return "\n".join(lines)


def _after(before: asyncio.Future[None] | None, mine: asyncio.Future[None]) -> None:
    """Settle ``mine`` once ``before`` is: the next question waits for both."""
    if before is None or before.done():
        mine.set_result(None)
    else:
        before.add_done_callback(lambda _f: mine.done() or mine.set_result(None))


def _inside(path: str, cwd: str) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in {cwd, os.path.realpath(cwd)})


def summary(name: str, args: dict[str, Any]) -> str:
    """A call in a few words: a command's first line, a file tool's path, else compact JSON (cut
    at :data:`TITLE_CHARS`)."""
    command, path = args.get("command"), args.get("path")
    if name == "bash" and isinstance(command, str):
        text = command.strip().split("\n", 1)[0]
    elif isinstance(path, str) and name in CANONICAL:
        text = path
    else:
        text = json.dumps(args, ensure_ascii=False, separators=(",", ":"), default=str)
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"


def title(name: str, args: dict[str, Any]) -> str:
    """The approval dialog's title: ``Allow <tool>: <summary>?``."""
    return f"Allow {name}: {summary(name, args)}?"
