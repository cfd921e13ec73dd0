"""Makes the UI and error events happen: ``/notify`` sends a notify, a status and a widget;
``/boom`` is a command that raises (``extension_error``)."""

from atomic_host import hookimpl
from atomic_host.contract.commands import SlashCommand


def _notify(args: str, api) -> None:
    api.ui.notify("note", "warning")
    api.ui.set_status("k", "busy")
    api.ui.set_widget("w", ["line"])


def _boom(args: str, api) -> None:
    raise RuntimeError("boom")


@hookimpl
def register_commands(register) -> None:
    register(SlashCommand("notify", _notify, description="UI events"))
    register(SlashCommand("boom", _boom, description="raises"))
