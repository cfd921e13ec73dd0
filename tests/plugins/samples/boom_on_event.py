"""Raises in ``on_event`` (for every event)."""

from atomic_host import hookimpl


@hookimpl
def on_event(event, api) -> None:
    raise RuntimeError("boom in on_event")
