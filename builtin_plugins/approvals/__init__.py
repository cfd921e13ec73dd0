"""Approvals: permission modes and rules before a tool call runs (docs/permissions.md).

A ``tool_call`` gate, last in line (``trylast``: it sees other plugins' rewrites, and a call another
gate blocked is never asked about). It asks through ``api.ui.approve`` — a ``select`` over RPC,
``session/request_permission`` in ACP mode — and refuses what it would ask about where no one can
answer (print mode). While it has a policy to keep (a mode that asks, a deny or ask rule) it fails
closed: if it raises or times out, the call is blocked. ``/permissions`` shows the mode, the rules
and what was allowed for the session; ``/permissions <mode>`` changes the session's mode.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from atomic_host import fail_closed, hookimpl

if TYPE_CHECKING:
    from atomic_host.contract.events import SessionStartEvent, ToolCallEvent
    from atomic_host.contract.host import HostAPI
    from atomic_host.contract.results import ToolCallDecision
    from builtin_plugins.approvals.gate import Approvals

SERVICE = "approvals"
_hosts: weakref.WeakSet[Approvals] = weakref.WeakSet()
"""Every host's approvals in this process (one, outside tests): what the fail-closed test reads."""


def approvals_of(api: HostAPI) -> Approvals:
    """This host's approvals (made, and offered as the ``approvals`` service, on first use)."""
    found = api.service(SERVICE)
    if found is None:
        # lazy: the gate loads with the first mode or rule; with nothing configured, nothing loads
        from builtin_plugins.approvals.gate import Approvals

        found = Approvals(api)
        api.provide(SERVICE, found)
        _hosts.add(found)
    return found


def _enforcing() -> bool:
    return any(host.enforcing() for host in list(_hosts))


def _configured(api: HostAPI) -> bool:
    """Whether anything asks for approvals (cheap: read on every start and call until it does)."""
    return api.mode == "acp" or bool(getattr(api.options, "permission_mode", None)) or "permissions" in api.settings


@hookimpl
def host_start(api: HostAPI) -> None:
    if _configured(api):
        approvals_of(api)  # the mode and the rules are read (and reported) at start, not at the first call


@hookimpl
def session_start(event: SessionStartEvent, api: HostAPI) -> None:
    """On ``reload`` the mode and the rules are read again from the reloaded settings."""
    if event.reason != "reload":
        return
    found = api.service(SERVICE)
    if found is not None:
        found.read_settings()
    elif _configured(api):
        approvals_of(api)


@hookimpl(trylast=True)
@fail_closed(when=_enforcing)
async def tool_call(event: ToolCallEvent, api: HostAPI) -> ToolCallDecision | None:
    if api.service(SERVICE) is None and not _configured(api):
        return None  # nothing set (and no /permissions yet): tools run as the protocol always ran them
    return await approvals_of(api).gate(event)


async def permissions_command(args: str, api: HostAPI) -> None:
    approvals = approvals_of(api)
    wanted = args.strip()
    if wanted:
        try:
            mode = approvals.set_mode(api.session_id, wanted)
        except ValueError as exc:
            api.ui.notify(f"{exc} (default, acceptEdits, plan, bypassPermissions)", "error")
            return
        api.ui.notify(f"Permission mode: {mode}")
        return
    api.ui.notify(approvals.describe(api.session_id))


@hookimpl
def register_commands(register: Any) -> None:
    from atomic_host import SlashCommand  # lazy export: resolved when commands register, not at import

    register(
        SlashCommand(
            name="permissions",
            handler=permissions_command,
            description="Show the permission mode, rules and session approvals; /permissions <mode> changes the mode",
        )
    )
