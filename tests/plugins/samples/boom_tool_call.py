"""Raises in the ``tool_call`` gate."""

from atomic_host import hookimpl


@hookimpl
def tool_call(event, api) -> None:
    raise RuntimeError("boom in tool_call")
