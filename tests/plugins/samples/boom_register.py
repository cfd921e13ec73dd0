"""Imports fine, raises in ``register_tools``."""

from atomic_host import hookimpl


@hookimpl
def register_tools(register) -> None:
    raise ValueError("boom in register_tools")
