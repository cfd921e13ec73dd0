"""A slash command that writes a line on stderr and ends the host process at once, as a crash in
native code would: libc's ``_exit`` through ctypes (the host refuses ``os._exit`` from plugin code,
plugins/faults.py, but native code calling ``_exit`` is nothing it could catch)."""

import ctypes
import sys

from atomic_host import hookimpl
from atomic_host.contract.commands import SlashCommand


def _die(args: str, api) -> None:
    print(f"client-die-marker: {args}", file=sys.stderr, flush=True)
    ctypes.CDLL(None)._exit(int(args or "7"))


@hookimpl
def register_commands(register) -> None:
    register(SlashCommand("die", _die, description="write on stderr, then end the process"))
