"""An ``rm -rf`` guard: a ``tool_call`` gate that blocks a bash command containing ``rm -rf``.

Its check fails on purpose when the command carries a comment ``# fail=HOW``: ``raise``, ``exit``
(``sys.exit(2)``), ``hang`` (never returns: the time bound ends it) or ``dict`` (returns something
that is no ``ToolCallDecision``). It declares itself fail-closed unless ``FC_OPEN`` is set.
"""

import asyncio
import os
import sys

from atomic_host import ToolCallDecision, fail_closed, hookimpl


async def tool_call(event, api):
    if event.tool_name != "bash":
        return None
    command = event.input.get("command", "")
    fail = command.partition("# fail=")[2].strip()
    if fail == "raise":
        raise RuntimeError("the guard's policy file is unreadable")
    if fail == "exit":
        sys.exit(2)
    if fail == "hang":
        await asyncio.Event().wait()
    if fail == "dict":
        return {"block": True}
    if "rm -rf" in command:
        return ToolCallDecision(block=True, reason="rm -rf is not allowed")
    return None


tool_call = hookimpl(tool_call if os.environ.get("FC_OPEN") else fail_closed(tool_call))
