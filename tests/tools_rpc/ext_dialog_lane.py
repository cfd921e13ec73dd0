"""Extension commands that wait on the client: ``/ask`` opens a ``select`` (and a ``confirm``
after it) that a client may never answer; ``/nap`` sleeps without any dialog. Each writes what
it got to ``$DIALOG_LANE_LOG`` (one JSON line), so a test can read it after the host exited."""

import asyncio
import json
import os

from atomic_host import hookimpl
from atomic_host.contract.commands import SlashCommand


def _log(record: dict) -> None:
    with open(os.environ["DIALOG_LANE_LOG"], "a") as f:
        f.write(json.dumps(record) + "\n")


async def _ask(args: str, api) -> None:
    try:
        choice = await api.ui.select("Pick a colour", ["red", "green"])
        again = await api.ui.confirm("Sure?")  # asked after the first was cancelled: must not wait either
    except asyncio.CancelledError:
        _log({"ask": "cancelled"})
        raise
    _log({"ask": choice, "confirm": again})
    api.append_entry("asked", {"choice": choice, "confirm": again})


async def _nap(args: str, api) -> None:
    _log({"nap": "start"})
    await asyncio.sleep(3600)


@hookimpl
def register_commands(register) -> None:
    register(SlashCommand("ask", _ask, description="ask the user something"))
    register(SlashCommand("nap", _nap, description="sleep for an hour"))
