"""Ends its code in ``register_commands`` after registering ``/px_half`` (``_px_how.end_it``)."""

from _px_how import end_it

from atomic_host import SlashCommand, hookimpl


@hookimpl
def register_commands(register) -> None:
    register(SlashCommand("px_half", lambda args, api: None, description="registered before the exit"))
    end_it()
