"""Slash commands for print-mode tests: one that notifies and asks, one that fails."""

from atomic_host import hookimpl
from atomic_host.contract.commands import SlashCommand


async def _greet(args, api):
    api.ui.notify(f"hello {args or 'world'}")
    ok = await api.ui.confirm("Really greet?", "sure?")
    choice = await api.ui.select("Pick a colour", ["red", "blue"])
    api.ui.notify(f"confirmed={ok} choice={choice}", "warning")


def _boom(args, api):
    raise RuntimeError("boom in command")


@hookimpl
def register_commands(register):
    register(SlashCommand("greet", _greet, description="greet and ask"))
    register(SlashCommand("boom", _boom, description="fails"))
