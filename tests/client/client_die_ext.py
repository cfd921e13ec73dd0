"""A slash command that writes a line on stderr and ends the host process at once (``os._exit``:
nothing the host could catch), as a crash in native code or the OOM killer would."""

import os
import sys

from atomic_host import hookimpl
from atomic_host.contract.commands import SlashCommand


def _die(args: str, api) -> None:
    print(f"client-die-marker: {args}", file=sys.stderr, flush=True)
    os._exit(int(args or "7"))


@hookimpl
def register_commands(register) -> None:
    register(SlashCommand("die", _die, description="write on stderr, then end the process"))
