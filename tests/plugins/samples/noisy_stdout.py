"""Prints to stdout at import and while registering: must never reach the protocol stream."""

import sys

from atomic_host import hookimpl
from atomic_host.contract.commands import SlashCommand

print("NOISE-AT-IMPORT")
sys.stdout.write("NOISE-WRITE\n")
sys.stdout.flush()


@hookimpl
def register_commands(register) -> None:
    print("NOISE-IN-REGISTER")
    register(SlashCommand("noisy", lambda args, api: print("NOISE-IN-COMMAND"), description="prints"))
