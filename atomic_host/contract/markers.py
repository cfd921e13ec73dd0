"""The pluggy markers of atomic-host: ``@hookspec`` for the host, ``@hookimpl`` for plugins."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

PROJECT_NAME = "atomic_host"
"""pluggy project name, marker name and entry-point group."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

FAIL_CLOSED = PROJECT_NAME + "_fail_closed"
"""The attribute :func:`fail_closed` sets on a hook implementation."""


def fail_closed(fn: Any = None, /, *, when: Callable[[], bool] | None = None) -> Any:
    """Declare a ``tool_call`` gate fail-closed (above or below ``@hookimpl``)::

        @hookimpl
        @fail_closed
        def tool_call(event, api): ...

        @hookimpl
        @fail_closed(when=lambda: POLICY.active)  # fail-closed only while this is true
        def tool_call(event, api): ...

    When such a gate fails (raises, calls ``sys.exit``, times out after ``hookTimeoutMs``, returns
    something that is no ``ToolCallDecision``) the tool call is blocked, with an error result that
    names the gate and what went wrong, instead of running as if the gate had no opinion. The
    setting ``"hooks": {"failClosed": true}`` makes every gate so, and also blocks tool calls while
    any extension failed to load (a gate in it could not run).

    ``when`` is asked each time the gate fails (and when its plugin fails to register): the gate
    fails closed while it returns True (or raises), and open otherwise.
    """
    if fn is None:
        return lambda f: fail_closed(f, when=when)
    setattr(fn, FAIL_CLOSED, True if when is None else when)
    return fn
